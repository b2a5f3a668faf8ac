"""Which format is this text? Decided by content; the file extension only breaks ties.

Order matters: the most specific markers first (our own JSON schema, SQL table names, CSV
headers, perplexity results), then the console markers, then bare `ggml_test:` lines.
"""

from __future__ import annotations

import re

from meshcert.evidence.parsers import llama_bench_md
from meshcert.evidence.parsers.base import (
    AB_COMPARISON,
    COMPETITIVE,
    EVIDENCE_JSON,
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
    TOKEN_LENGTHS,
    UNKNOWN,
)

_HEAD = 1 << 20
_OLD_BENCH_SQL = re.compile(r"(?:INSERT INTO|CREATE TABLE IF NOT EXISTS)\s+test\s*\(",
                            re.IGNORECASE)
_CONSOLE_ROW = re.compile(r"^[ \t]+[A-Z][A-Za-z0-9_.\-]*\(.*?\):[ \t]*(?:\x1b\[[0-9;]*m)?"
                          r"(?:OK|FAIL|not supported|\d+ runs -)", re.MULTILINE)
# a failure printed before its case name: `[OP] NMSE = x > y   OP(params): FAIL`
_ERROR_FIRST_ROW = re.compile(r"^\[[A-Z][A-Z0-9_]*\] (?:NMSE|ERR|MAA) = \S+ > \S+\s+"
                              r"[A-Z][A-Za-z0-9_.\-]*\(.*\): ", re.MULTILINE)
_CONSOLE_SECTION = re.compile(r"^(?:Backend \d+/\d+: |Testing \d+ devices|\d+/\d+ backends "
                              r"passed|  \d+/\d+ tests passed)", re.MULTILINE)
_PERPLEXITY = ("Final estimate: PPL", "KL divergence statistics", "KL-divergence statistics",
               "Same top p:", "Mean    KLD:", "Mean KLD:", "perplexity: calculating perplexity",
               "kl_divergence: computing over", "Perplexity statistics")


def _first_line(text: str) -> str:
    for line in text.split("\n", 50)[:50]:
        if line.strip():
            return line.strip()
    return ""


def detect(text: str, name: str = "") -> str:
    """One of the format names in `meshcert.evidence.parsers.base` (UNKNOWN when nothing fits)."""
    text = text.lstrip("\ufeff")
    head = text[:_HEAD]
    start = head.lstrip()[:1]
    if start in ("{", "["):
        found = _json_kind(head, start)
        if found != UNKNOWN:
            return found
    if "emitted fixture span for run_id=" in head[:20000]:
        return METRICS_SERVER       # metrics-server emit-fixture: detected, then refused
    if start not in ("{", "[") and "attached dflash" in head:
        return SPEC_BENCH           # a DFlash llama-spec-bench stderr log
    upper = head[:20000].upper()
    if "INSERT INTO TEST_BACKEND_OPS" in upper or "TABLE IF NOT EXISTS TEST_BACKEND_OPS" in upper:
        return TBO_SQL
    if "INSERT INTO LLAMA_BENCH" in upper or "TABLE IF NOT EXISTS LLAMA_BENCH" in upper:
        return LLAMA_BENCH
    if _OLD_BENCH_SQL.search(head[:20000]) and ("AVG_NS" in upper or "AVG_TS" in upper):
        return LLAMA_BENCH          # llama-bench -o sql before the table was renamed
    if llama_bench_md.has_table(head):
        return LLAMA_BENCH          # the default markdown table, wherever it sits
    first = _first_line(head)
    columns = {c.strip().strip('"') for c in first.split(",")} if "," in first else set()
    if {"op_name", "op_params"} <= columns and "time_us" not in columns:
        return TBO_CSV
    if columns & {"avg_ns", "avg_ts"}:
        return LLAMA_BENCH
    for body in (head, text) if len(text) > _HEAD else (head,):
        if any(marker in body for marker in _PERPLEXITY):
            return PERPLEXITY
        if (" us/run" in body or _CONSOLE_SECTION.search(body) or _CONSOLE_ROW.search(body)
                or _ERROR_FIRST_ROW.search(body)):
            return TBO_CONSOLE
        if "ggml_test: perf_" in body:
            return GGML_TEST
    return _by_extension(name)


def _json_kind(head: str, start: str) -> str:
    if start == "{" and '"schema"' in head[:2000] and '"meshcert.evidence"' in head[:2000]:
        return EVIDENCE_JSON
    if '"avg_ns"' in head or '"avg_ts"' in head or '"samples_ns"' in head:
        return LLAMA_BENCH
    return _mesh_kind(head)


# (format, every key it needs): the first whose keys all appear in the text's head wins
_MESH_MARKERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (PERF_HISTORY, ('"cohort_key"', '"source_sha"')),
    (AB_COMPARISON, ('"paired_delta_percent"',)),
    (AB_COMPARISON, ('"cells"', '"comparison_admitted"')),
    (AB_COMPARISON, ('"cells"', '"qualified"')),
    (PROMOTION, ('"candidates"', '"synthetic_mean_percent"')),
    (COMPETITIVE, ('"report_complete"',)),
    (COMPETITIVE, ('"requested_cells"',)),
    (SKIPPY_FOCUSED, ('"scenario"', '"stage_count"')),
    (SKIPPY_FOCUSED, ('"scenario"', '"mode"', '"outputs"')),
    (SPEC_BENCH, ('"speculative_window"',)),
    (SPEC_BENCH, ('"target_model_path"',)),
    (METRICS_SERVER, ('"telemetry_loss"',)),
    (SKIPPY_EVAL, ('"eval_id"',)),
    (SKIPPY_EVAL, ('"completed_samples"',)),
    (TOKEN_LENGTHS, ('"exceeds_context"', '"row_count"')),
    (SKIPPY_LOCAL, ('"text_response"',)),
    (SKIPPY_LOCAL, ('"matches"', '"split"')),
    (SKIPPY_RUN, ('"prompt_count"', '"summary"')),
    (SKIPPY_RUN, ('"results"', '"ttft_ms"')),
)


def _mesh_kind(head: str) -> str:
    """A mesh-llm format by the keys its JSON carries (bench-formats spec)."""
    for fmt, keys in _MESH_MARKERS:
        if all(k in head for k in keys):
            return fmt
    return UNKNOWN


def _by_extension(name: str) -> str:
    """No content marker at all (an empty run, chatter only): go by the name."""
    lower = name.lower()
    if lower.endswith(".sql"):
        return TBO_SQL
    if lower.endswith((".console.log", ".log")):
        return TBO_CONSOLE
    return UNKNOWN
