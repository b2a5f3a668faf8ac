"""Benchmark evidence: llama.cpp fixture timings, parity and quality runs -> decisions.

Ingestion (this package's front door):

    from meshcert.evidence import ingest_files, COLUMNS
    result = ingest_files(paths, label=None)   # .table (pandas, on first use), .problems, .sources
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from meshcert.evidence.columns import COLUMNS, DTYPES
    from meshcert.evidence.ingest import (
        IngestResult,
        SourceInfo,
        ingest_files,
        ingest_texts,
        read_evidence_json,
        write_evidence_json,
    )
    from meshcert.evidence.parsers.base import IngestProblem
    from meshcert.evidence.table import empty_table

# The front-door names load on first use (PEP 562), so importing a light submodule such as
# `meshcert.evidence.rules` (the CLI's help text needs it) does not pull in pandas.
_HOMES = {
    "IngestResult": "meshcert.evidence.ingest", "SourceInfo": "meshcert.evidence.ingest",
    "ingest_files": "meshcert.evidence.ingest", "ingest_texts": "meshcert.evidence.ingest",
    "read_evidence_json": "meshcert.evidence.ingest",
    "write_evidence_json": "meshcert.evidence.ingest",
    "IngestProblem": "meshcert.evidence.parsers.base",
    "COLUMNS": "meshcert.evidence.columns", "DTYPES": "meshcert.evidence.columns",
    "empty_table": "meshcert.evidence.table",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'evidence' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


__all__ = [
    "COLUMNS",
    "DTYPES",
    "IngestProblem",
    "IngestResult",
    "SourceInfo",
    "empty_table",
    "ingest_files",
    "ingest_texts",
    "read_evidence_json",
    "write_evidence_json",
]
