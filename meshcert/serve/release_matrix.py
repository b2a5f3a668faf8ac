"""`catalog recheck --mesh-llm X.Y.Z`: every catalog package certified against one mesh-llm
release, the release matrix (package x release -> loads, or refused with the codes) kept up to
date, and one discussion opened on the repo of each package the release refuses (never two:
a discussion of the service's own account with the same title, open or closed, is enough).

What a release is asked (meshcert implements mesh-llm 0.79's package rules): the manifest must
parse on it (`--min-mesh-llm X.Y.Z`: a manifest needing a newer release is the error
`mesh_llm_version_too_old`), and with the release's runtime ABI given (`--runtime-abi`, as its
release notes state it; meshcert holds no table of them) the producer ABI is compared with it.
Header-only, with the Hub's LFS SHA-256 as the digests: no byte of an artifact is hashed.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from meshcert.certify.mesh_llm_versions import parse_version
from meshcert.core.atomic import write_atomic
from meshcert.core.clock import utc_now
from meshcert.serve.markdown import plain

if TYPE_CHECKING:
    from meshcert.catalog.report import CatalogPackage
    from meshcert.serve.hub_side import ServeHub

MATRIX_SCHEMA = 1


@dataclass(frozen=True)
class Cell:
    package: str  # repo@commit (or repo@revision when it could not be resolved)
    repo: str
    verdict: str  # loads | refused | unknown
    codes: tuple[str, ...] = ()
    messages: tuple[str, ...] = ()


@dataclass
class Recheck:
    release: str
    runtime_abi: str | None
    cells: list[Cell]
    opened: list[str] = field(default_factory=list)  # repos a discussion was opened on
    already: list[str] = field(default_factory=list)  # repos that had one already

    @property
    def refused(self) -> list[Cell]:
        return [c for c in self.cells if c.verdict == "refused"]


def cell_of(row: CatalogPackage) -> Cell:
    name = f"{row.repo}@{row.revision or row.requested_revision or 'main'}"
    if row.status == "incomplete" or row.revision is None:
        return Cell(name, row.repo, "unknown", tuple(row.error_codes))
    if row.status == "failed":
        from meshcert.core.codes import entry

        return Cell(name, row.repo, "refused", tuple(row.error_codes), tuple(
            f"`{code}`: {entry(code).remediation_for('error')}" for code in row.error_codes))
    return Cell(name, row.repo, "loads")


def recheck_catalog(catalog: str, release: str, runtime_abi: str | None = None, *,
                    concurrency: int = 4) -> Recheck:
    """Certify every package of `catalog` against `release` (CatalogError when the catalog
    cannot be read)."""
    from meshcert.catalog.report import CatalogOptions
    from meshcert.catalog.run import CatalogRequest, certify_catalog
    from meshcert.catalog.sources import open_catalog

    options = CatalogOptions(runtime_abi=runtime_abi, min_mesh_llm=release)
    run = certify_catalog(open_catalog(catalog),
                          CatalogRequest(options=options, concurrency=concurrency))
    return Recheck(release, runtime_abi, [cell_of(p) for p in run.report.packages])


# --- the matrix -----------------------------------------------------------------------------
def load_matrix(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The matrix file, or an empty matrix when there is none (ValueError when unreadable)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"schema_version": MATRIX_SCHEMA, "releases": {}}
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a release matrix ({exc})") from None
    if not isinstance(data, dict) or data.get("schema_version") != MATRIX_SCHEMA \
            or not isinstance(data.get("releases"), dict):
        raise ValueError(f"{path}: not a release matrix (schema_version {MATRIX_SCHEMA})")
    return data


def add_release(matrix: dict[str, Any], result: Recheck, catalog: str) -> dict[str, Any]:
    matrix["releases"][result.release] = {
        "runtime_abi": result.runtime_abi, "checked_at": utc_now(), "catalog": catalog,
        "packages": {c.package: {"verdict": c.verdict, "codes": list(c.codes)}
                     for c in result.cells}}
    return matrix


def _release_key(name: str) -> tuple[int, int, int]:
    return parse_version(name) or (0, 0, 0)


def release_order(matrix: dict[str, Any]) -> list[str]:
    return sorted(matrix["releases"], key=_release_key)


def matrix_markdown(matrix: dict[str, Any]) -> str:
    releases = release_order(matrix)
    packages = sorted({p for r in releases for p in matrix["releases"][r]["packages"]})
    lines = ["# Release matrix", "", "| package | " + " | ".join(
        f"mesh-llm {r}" for r in releases) + " |", "|---" * (len(releases) + 1) + "|"]
    for package in packages:
        cells = []
        for release in releases:
            got = matrix["releases"][release]["packages"].get(package)
            if got is None:
                cells.append("")
            elif got["verdict"] == "refused":
                cells.append("refused: " + ", ".join(f"`{c}`" for c in got["codes"]))
            else:
                cells.append(str(got["verdict"]))
        lines.append(f"| `{package}` | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_matrix(path: str | os.PathLike[str], matrix: dict[str, Any]) -> Path:
    """matrix.json and matrix.md beside it; the Markdown's path."""
    target = Path(path)
    write_atomic(str(target), json.dumps(matrix, indent=2, sort_keys=True) + "\n")
    markdown = target.with_suffix(".md")
    write_atomic(str(markdown), matrix_markdown(matrix))
    return markdown


# --- discussions ------------------------------------------------------------------------------
_PACKAGE = re.compile(r"^[\w.-]+/[\w.-]+@[\w.-]+$", re.ASCII)  # repo@commit, nothing else


def discussion_title(release: str) -> str:
    return f"meshcert: mesh-llm {release} refuses this package"


def discussion_body(cell: Cell, result: Recheck) -> str:
    abi = f" (runtime ABI {result.runtime_abi})" if result.runtime_abi else ""
    package = f"`{cell.package}`" if _PACKAGE.match(cell.package) else plain(cell.package)
    lines = [f"mesh-llm {result.release}{abi} refuses {package}, as certified by "
             "meshcert:", ""] + [f"- {m}" for m in cell.messages]  # codes' own text
    lines += ["", "Each code with its fix, from meshcert's finding-code table "
              "(docs/finding-codes.md). This discussion is opened once per release; close it "
              "when it is settled.",
              "<!-- meshcert -->"]
    return "\n".join(lines) + "\n"


def open_discussions(result: Recheck, hub: ServeHub) -> Recheck:
    """One discussion per refused package's repo, unless the service opened one already."""
    title = discussion_title(result.release)
    me = hub.me()
    for repo in dict.fromkeys(c.repo for c in result.refused):
        cell = next(c for c in result.refused if c.repo == repo)
        if hub.has_discussion(repo, title, me):
            result.already.append(repo)
            continue
        hub.create_discussion(repo, title, discussion_body(cell, result))
        result.opened.append(repo)
    return result
