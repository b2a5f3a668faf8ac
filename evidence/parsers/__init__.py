"""One parser per input format: pure functions `parse(text, source) -> ParsedFile`.

`PARSERS` maps a detected format (see `detect.detect`) to its parser; the evidence JSON reader
(`evidence_json`) is separate because its rows already carry every column.
"""

from __future__ import annotations

from collections.abc import Callable

from evidence.parsers import ggml_test, llama_bench, perplexity, tbo_console, tbo_sql
from evidence.parsers.base import (
    GGML_TEST,
    LLAMA_BENCH,
    PERPLEXITY,
    TBO_CONSOLE,
    TBO_CSV,
    TBO_SQL,
    TBO_TEST,
    IngestProblem,
    ParsedFile,
    Row,
)
from evidence.parsers.detect import detect

Parser = Callable[[str, str], ParsedFile]

PARSERS: dict[str, Parser] = {
    TBO_CONSOLE: tbo_console.parse,
    TBO_TEST: tbo_console.parse,
    TBO_SQL: tbo_sql.parse,
    TBO_CSV: tbo_sql.reject_csv,
    GGML_TEST: ggml_test.parse,
    LLAMA_BENCH: llama_bench.parse,
    PERPLEXITY: perplexity.parse,
}

__all__ = ["PARSERS", "IngestProblem", "ParsedFile", "Parser", "Row", "detect"]
