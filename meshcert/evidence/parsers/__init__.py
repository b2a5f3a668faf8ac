"""One parser per input format: pure functions `parse(text, source) -> ParsedFile`.

`PARSERS` maps a detected format (see `detect.detect`) to its parser; the evidence JSON reader
(`evidence_json`) is separate because its rows already carry every column.
"""

from __future__ import annotations

from collections.abc import Callable

from meshcert.evidence.parsers import (
    ab_comparison,
    competitive,
    ggml_test,
    llama_bench,
    metrics_server,
    perf_history,
    perplexity,
    skippy_eval,
    skippy_focused,
    skippy_local,
    skippy_run,
    spec_bench,
    tbo_console,
    tbo_sql,
    token_lengths,
)
from meshcert.evidence.parsers.base import (
    AB_COMPARISON,
    COMPETITIVE,
    GGML_TEST,
    LLAMA_BENCH,
    METRICS_SERVER,
    PERF_HISTORY,
    PERPLEXITY,
    PROMOTION,
    SKIPPY_EVAL,
    SKIPPY_FOCUSED,
    SKIPPY_LOCAL,
    SKIPPY_RUN,
    SPEC_BENCH,
    TBO_CONSOLE,
    TBO_CSV,
    TBO_SQL,
    TBO_TEST,
    TOKEN_LENGTHS,
    IngestProblem,
    ParsedFile,
    Row,
)
from meshcert.evidence.parsers.detect import detect

Parser = Callable[[str, str], ParsedFile]

PARSERS: dict[str, Parser] = {
    TBO_CONSOLE: tbo_console.parse,
    TBO_TEST: tbo_console.parse,
    TBO_SQL: tbo_sql.parse,
    TBO_CSV: tbo_sql.reject_csv,
    GGML_TEST: ggml_test.parse,
    LLAMA_BENCH: llama_bench.parse,
    PERPLEXITY: perplexity.parse,
    SKIPPY_RUN: skippy_run.parse,
    SKIPPY_FOCUSED: skippy_focused.parse,
    SKIPPY_LOCAL: skippy_local.parse,
    SKIPPY_EVAL: skippy_eval.parse,
    SPEC_BENCH: spec_bench.parse,
    METRICS_SERVER: metrics_server.parse,
    COMPETITIVE: competitive.parse_report,
    PROMOTION: competitive.parse_promotion,
    PERF_HISTORY: perf_history.parse,
    AB_COMPARISON: ab_comparison.parse,
    TOKEN_LENGTHS: token_lengths.parse,
}

__all__ = ["PARSERS", "IngestProblem", "ParsedFile", "Parser", "Row", "detect"]
