"""Shared by the mesh-llm parser tests: the fixtures folder and a row lookup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from meshcert.evidence.ingest import IngestResult, ingest_files

DATA = Path(__file__).resolve().parents[1] / "data" / "mesh"


def ingest(*names: str) -> IngestResult:
    return ingest_files([DATA / n for n in names])


def values(result: IngestResult) -> dict[str, Any]:
    """metric -> (value, unit, pointer) of the first row of each metric."""
    out: dict[str, Any] = {}
    for r in result.table.to_dict("records"):
        out.setdefault(r["metric"], (r["value"], r["extra"].get("unit"),
                                     r["extra"].get("pointer")))
    return out


def refusal(result: IngestResult) -> tuple[int, str, str]:
    """(rows, kind, reason) of a refused file."""
    (problem,) = result.problems
    return result.row_count, problem.kind, problem.reason
