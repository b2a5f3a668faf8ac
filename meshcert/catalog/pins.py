"""`--write-pins DIR`: the catalog entries with each certified package's commit recorded as
`"revision": "<40-hex>"` in its package reference, exactly the change a catalog pull request
would make, written under DIR (never over the catalog itself).

Only a reference whose row passed is pinned (a pin vouches for the bytes it names); one that
already records a commit is left as it is. An entry is re-serialized with its own indent, key
order and trailing newline, so the diff is the added lines.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meshcert.catalog.entries import PackageReference
from meshcert.catalog.report import CatalogPackage
from meshcert.core.atomic import write_atomic
from meshcert.core.errors import ErrorKind, MeshcertError


class PinError(MeshcertError):
    """DIR would write into the catalog, or an entry could not be re-written."""

    kind = ErrorKind.USAGE


@dataclass
class PinPlan:
    files: dict[str, str] = field(default_factory=dict)  # entry path -> new text
    pinned: list[CatalogPackage] = field(default_factory=list)
    left: list[tuple[CatalogPackage, str]] = field(default_factory=list)  # (row, why not)


def _indent(text: str) -> str | None:
    """The indent of the entry's first nested line (None: the file is on one line)."""
    for line in text.splitlines()[1:]:
        stripped = line.lstrip(" \t")
        if stripped and len(stripped) < len(line):
            return line[: len(line) - len(stripped)]
    return None


def _with_revision(package: dict[str, Any], commit: str) -> dict[str, Any]:
    """The reference with `revision` set, placed right after `repo` when it is new."""
    if "revision" in package:
        return {k: (commit if k == "revision" else v) for k, v in package.items()}
    out: dict[str, Any] = {}
    for key, value in package.items():
        out[key] = value
        if key == "repo":
            out["revision"] = commit
    if "revision" not in out:
        out["revision"] = commit
    return out


def _dump(data: Any, original: str) -> str:
    indent = _indent(original)
    ascii_only = "\\u" in original or original.isascii()
    if indent is None:
        text = json.dumps(data, ensure_ascii=ascii_only)
    else:
        text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    return text + ("\n" if original.endswith("\n") else "")


def plan_pins(files: dict[str, bytes], references: list[PackageReference],
              rows: list[CatalogPackage]) -> PinPlan:
    """Which references get pinned, and each changed entry's new text (pure)."""
    plan = PinPlan()
    edits: dict[str, list[tuple[PackageReference, str]]] = {}
    for reference, row in zip(references, rows, strict=True):
        if reference.pinned_commit is not None:
            continue  # already pinned
        if row.status != "passed" or row.revision is None:
            why = ("it could not be resolved" if row.revision is None
                   else f"its verdict is {row.status}")
            plan.left.append((row, f"not pinned: {why}"))
            continue
        edits.setdefault(reference.entry, []).append((reference, row.revision))
        plan.pinned.append(row)
    for path, changes in edits.items():
        original = files[path].decode("utf-8").removeprefix("\ufeff")
        data = json.loads(original)
        for reference, commit in changes:
            variants = data["variants"]
            variant = (variants[reference.position] if isinstance(variants, list)
                       else variants[reference.variant])
            packages = variant["packages"]
            packages[reference.index] = _with_revision(packages[reference.index], commit)
        plan.files[path] = _dump(data, original)
    return plan


def check_target(target: str | os.PathLike[str], catalog_root: str | None) -> Path:
    """DIR, refused when it is the catalog checkout or inside it."""
    out = Path(target)
    if catalog_root is not None:
        root = Path(catalog_root).resolve()
        where = out.resolve()
        if where == root or root in where.parents:
            raise PinError(f"--write-pins {str(target)!r} is inside the catalog checkout "
                           f"{catalog_root!r}; pins are written beside the catalog, never "
                           "over it")
    if out.exists() and not out.is_dir():
        raise PinError(f"--write-pins {str(target)!r} is not a directory")
    return out


def write_pins(plan: PinPlan, target: str | os.PathLike[str], catalog_root: str | None
               ) -> list[Path]:
    """Write each changed entry under `target` (entries/<owner>/<repo>.json)."""
    base = check_target(target, catalog_root)
    return [write_atomic(base / path, text) for path, text in sorted(plan.files.items())]
