"""Benchmark evidence: llama.cpp fixture timings, parity and quality runs -> decisions.

Ingestion (this package's front door):

    from meshcert.evidence import ingest_files, COLUMNS
    result = ingest_files(paths, label=None)   # .table (pandas, on first use), .problems, .sources
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshcert.core.lazy import lazy_exports

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

# Importing a light submodule such as `meshcert.evidence.rules` (the CLI's help text needs it)
# must not pull in pandas.
__getattr__ = lazy_exports(__name__, {
    "ingest": ("IngestResult", "SourceInfo", "ingest_files", "ingest_texts",
               "read_evidence_json", "write_evidence_json"),
    "parsers.base": ("IngestProblem",),
    "columns": ("COLUMNS", "DTYPES"),
    "table": ("empty_table",),
})


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
