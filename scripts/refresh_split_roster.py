#!/usr/bin/env python3
"""Refresh meshcert's copy of mesh-llm's split-serving roster (split-certified.json).

    python3 scripts/refresh_split_roster.py SOURCE [--commit SHA] [--retrieved YYYY-MM-DD]
                                            [--out meshcert/certify/data/split-certified.json]

SOURCE is a mesh-llm checkout (the roster is looked up at its known paths) or the
split-certified.json file itself. The file must be in mesh-llm's shape (schema_version 2, the
three native_recipe values, architecture names); it is written back with mesh-llm's three keys
unchanged (names sorted and de-duplicated) plus a `meshcert` object recording where it came
from, the commit (given, or `git rev-parse HEAD` of a checkout), the retrieval date and
`partial: false`. No network: fetch or check out mesh-llm yourself.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DEFAULT_OUT = REPO / "certify" / "data" / "split-certified.json"
# where mesh-llm keeps the bundled roster (newest first)
CHECKOUT_PATHS = (
    "skippy/crates/skippy-api/src/split-certified.json",
    "crates/mesh-llm-host-runtime/src/inference/skippy/split-certified.json",
)
RECIPE_KEYS = ("llama_upstream_sha", "skippy_abi", "patch_queue_sha256")


class RefreshError(ValueError):
    pass


def locate(source: Path) -> tuple[Path, str]:
    """The roster file and its path as named in the record."""
    if source.is_file():
        return source, source.name
    for rel in CHECKOUT_PATHS:
        candidate = source / rel
        if candidate.is_file():
            return candidate, rel
    raise RefreshError(f"{source}: no split-certified.json at {', '.join(CHECKOUT_PATHS)}")


def checkout_commit(source: Path) -> str | None:
    if not source.is_dir():
        return None
    try:
        done = subprocess.run(["git", "-C", str(source), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = done.stdout.strip()
    return commit if len(commit) == 40 else None


def refreshed(document: Any, *, source: str, commit: str | None, retrieved: str
              ) -> dict[str, Any]:
    """The roster in meshcert's shipped form, or RefreshError when it is not mesh-llm's."""
    if not isinstance(document, dict) or document.get("schema_version") != 2:
        raise RefreshError("not a split-certified.json with schema_version 2")
    recipe = document.get("native_recipe")
    if not isinstance(recipe, dict) or not all(
            isinstance(recipe.get(k), str) and recipe[k] for k in RECIPE_KEYS):
        raise RefreshError("native_recipe must hold " + ", ".join(RECIPE_KEYS))
    names = document.get("architectures")
    if not isinstance(names, list) or not names or not all(
            isinstance(n, str) and n for n in names):
        raise RefreshError("architectures must be a non-empty list of names")
    return {"schema_version": 2,
            "native_recipe": {k: recipe[k] for k in RECIPE_KEYS},
            "architectures": sorted(set(names)),
            "meshcert": {"source": f"Mesh-LLM/mesh-llm {source}", "commit": commit,
                         "retrieved": retrieved, "partial": False}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a mesh-llm checkout or the roster file")
    parser.add_argument("--commit", help="the mesh-llm commit the file was read at")
    parser.add_argument("--retrieved", help="the retrieval date (default: today, UTC)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    try:
        path, named = locate(args.source)
        document = json.loads(path.read_text(encoding="utf-8"))
        roster = refreshed(document, source=named,
                           commit=args.commit or checkout_commit(args.source),
                           retrieved=args.retrieved or datetime.now(UTC).date().isoformat())
    except (OSError, ValueError) as exc:  # RefreshError and JSONDecodeError are ValueErrors
        print(f"refresh_split_roster: {exc}", file=sys.stderr)
        return 1
    args.out.write_text(json.dumps(roster, indent=2) + "\n", encoding="utf-8")
    print(f"{args.out}: {len(roster['architectures'])} architectures, recipe "
          f"skippy_abi {roster['native_recipe']['skippy_abi']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
