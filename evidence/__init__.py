"""Benchmark evidence: llama.cpp fixture timings, parity and quality runs -> decisions.

Ingestion (this package's front door):

    from evidence import ingest_files, COLUMNS
    result = ingest_files(paths, label=None)   # .table (pandas), .problems, .sources
"""

from __future__ import annotations

from evidence.ingest import (
    IngestResult,
    SourceInfo,
    ingest_files,
    ingest_texts,
    read_evidence_json,
    write_evidence_json,
)
from evidence.parsers.base import IngestProblem
from evidence.table import COLUMNS, DTYPES, empty_table

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
