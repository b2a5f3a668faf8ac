"""Every evidence format, one entry each: its name, how it is recognised, its parser, a line of
it, and (mesh-llm formats) what rows it gives and when it is refused.

Detection (`detect.detect`), the parser table (`PARSERS`), the "unrecognised format" message
and the format tables of docs/evidence.md (`python3 scripts/generate.py evidence-format-tables`,
checked by tests/evidence/parsers/test_registry.py) are all derived from `EVIDENCE_FORMATS`.
Adding a format: one `EvidenceFormat` here, its parser module, its tests.

Detection tries every rule of every format in `Rule.order` (most specific first: our own JSON,
llama-bench JSON, the mesh-llm JSON shapes, SQL, tables, CSV headers, then console markers);
the first that holds names the format. `content` rules look at the text's first MB, `body`
rules at the first MB and then (nothing found) the whole text, `name` rules (nothing found in
the content at all) at the file name.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from meshcert.evidence.parsers import (
    ab_comparison,
    competitive,
    ggml_test,
    llama_bench,
    llama_bench_md,
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
    TBO_TEST,
    TOKEN_LENGTHS,
    ParsedFile,
)
from meshcert.evidence.parsers.probe import NOT_JSON, Probe

Parser = Callable[[str, str], ParsedFile]
Test = Callable[[Probe], bool]


@dataclass(frozen=True)
class Rule:
    """One way to recognise a format: `says` is how the docs put it."""

    order: int
    says: str
    test: Test
    scope: Literal["content", "body", "name"] = "content"
    top: frozenset[str] | None = None   # a JSON object with none of these keys: not it


@dataclass(frozen=True)
class Example:
    what: str       # which variant of the format the line shows
    line: str


@dataclass(frozen=True)
class EvidenceFormat:
    name: str                       # the `format` column / SourceInfo.format
    title: str                      # what a person calls it
    rules: tuple[Rule, ...]         # () : never detected on its own (rows of another's parser)
    parse: Parser | None            # None: read by evidence_json (the merge), not a parser
    examples: tuple[Example, ...]   # the first is "its one-line example"
    within: str = ""                # rule-less: the format whose files hold these rows
    files: str = ""                 # mesh-llm formats: which files, rows, refusals (docs)
    rows: str = ""
    refused: str = ""

    @property
    def example(self) -> Example:
        return self.examples[0]


# --- shape tests of the mesh-llm JSON (bench-formats spec): by the decoded document's keys;
# a text that does not decode (truncated, JSONL) goes by the keys its head holds, so its
# parser can say what is wrong with it.

def _shape(decoded: Callable[[Any], bool], *marker_sets: tuple[str, ...],
           start: str = "") -> Test:
    def test(probe: Probe) -> bool:
        if not probe.json_like or (start and probe.start != start):
            return False
        doc = probe.doc
        if doc is not NOT_JSON:
            return decoded(doc)
        return any(probe.has(*markers) for markers in marker_sets)
    return test


def _keys(doc: Any, *keys: str) -> bool:
    return isinstance(doc, dict) and all(k in doc for k in keys)


def _has(*keys: str) -> Callable[[Any], bool]:
    """A test: the document is an object holding every one of `keys`."""
    wanted = frozenset(keys)
    return lambda doc: type(doc) is dict and wanted <= doc.keys()


def _either(*tests: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda doc: any(test(doc) for test in tests)


def _dicts(doc: Any, key: str) -> list[dict[str, Any]]:
    value = doc.get(key) if isinstance(doc, dict) else None
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _is_ab(doc: Any) -> bool:
    comparison = doc.get("comparison") if isinstance(doc, dict) else None
    status = doc.get("status") if isinstance(doc, dict) else None
    return (isinstance(comparison, dict) and ("paired_delta_percent" in comparison
                                              or "qualified" in comparison)) \
        or (_keys(doc, "cells") and ("comparison_admitted" in doc or (
            isinstance(status, str) and status.startswith(("adaptive_matrix", "mixed_matrix")))))


def _is_competitive(doc: Any) -> bool:
    return _keys(doc, "report_complete") or _keys(doc, "requested_cells") or any(
        "cell" in row for row in _dicts(doc, "rows"))


def _is_promotion(doc: Any) -> bool:
    return isinstance(doc, list) and any(isinstance(g, dict) and "candidates" in g for g in doc)


_SPEED_BENCH_KEYS = ("avg_pred_t_s", "avg_prompt_t_s", "avg_latency", "draft_n")


def _is_eval(doc: Any) -> bool:
    return _keys(doc, "eval_id") or _keys(doc, "completed_samples") or any(
        "category" in r and any(k in r for k in _SPEED_BENCH_KEYS)
        for r in (*_dicts(doc, "summary"), *_dicts(doc, "results")))


def _is_run(doc: Any) -> bool:
    return _keys(doc, "prompt_count", "summary") or any(
        "ttft_ms" in r for r in _dicts(doc, "results")[:1])


def _mesh(order: int, says: str, decoded: Callable[[Any], bool],
          *markers: tuple[str, ...], start: str = "", top: tuple[str, ...] = ()) -> Rule:
    return Rule(order, says, _shape(decoded, *markers, start=start),
                top=frozenset(top) if top else None)


# --- text tests

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


def _console(probe: Probe) -> bool:
    body = probe.body
    return (" us/run" in body or _CONSOLE_SECTION.search(body) is not None
            or _CONSOLE_ROW.search(body) is not None or _ERROR_FIRST_ROW.search(body) is not None)


EVIDENCE_FORMATS: tuple[EvidenceFormat, ...] = (
    EvidenceFormat(
        TBO_CONSOLE, "test-backend-ops console (perf mode)",
        (Rule(61, "` us/run`, a `Backend 1/3: ` / `Testing N devices` section or a "
              "`  NAME(params): ` case line", _console, "body"),
         Rule(91, "no content marker, a `.log` / `.console.log` name (an empty run)",
              lambda p: p.name.lower().endswith((".console.log", ".log")), "name")),
        tbo_console.parse,
        (Example("perf row", "  MUL_MAT(type_a=q4_0,type_b=f32,m=4096,n=1,k=14336,...):  "
                 "22152 runs -  45.22 us/run - 117.44 MFLOP/run - 2.60 TFLOPS"),
         Example("backend headers, today / 2023-24",
                 "Backend 1/3: MTL0` / `Backend 2/2 (CUDA0)` + `  Backend name: CUDA0"),
         Example("`ctest -V` output (the `31: ` prefix is removed)",
                 "31:   ADD(type=f32,ne=[4096,1,1,1],nr=[1,1,1,1]): OK"))),
    EvidenceFormat(
        TBO_TEST, "test-backend-ops test mode (parity)", (), tbo_console.parse,
        (Example("case line (detected as `tbo-console`; its rows are `tbo-test`)",
                 "  OUT_PROD(type_a=f32,type_b=f32,m=256,n=16,k=16,...): OK"),
         Example("failure printed error-first", "[MUL_MAT_ID] NMSE = 0.473073968 > "
                 "0.000500000   MUL_MAT_ID(type_a=f32,...): FAIL"),
         Example("`Failing tests:` list", "Failing tests:` then `  MUL_MAT(type_a=f16,"
                 "type_b=f32,...)")), within=TBO_CONSOLE),
    EvidenceFormat(
        TBO_SQL, "test-backend-ops `--output sql`",
        (Rule(50, "`INSERT INTO test_backend_ops` / `CREATE TABLE IF NOT EXISTS "
              "test_backend_ops`", lambda p: "INSERT INTO TEST_BACKEND_OPS" in p.upper
              or "TABLE IF NOT EXISTS TEST_BACKEND_OPS" in p.upper),
         Rule(90, "no content marker, a `.sql` name", lambda p: p.name.lower().endswith(".sql"),
              "name")),
        tbo_sql.parse,
        (Example("a row", "INSERT INTO test_backend_ops (test_time, ..., n_runs, ...) VALUES "
                 "('2026-09-24T10:57:39Z', ...);"),)),
    EvidenceFormat(
        TBO_CSV, "test-backend-ops `--output csv` (refused: no timing column)",
        (Rule(54, "a first line with `op_name`, `op_params` and no `time_us` column",
              lambda p: {"op_name", "op_params"} <= p.first_columns
              and "time_us" not in p.first_columns),),
        tbo_sql.reject_csv,
        (Example("header", "test_time,build_commit,backend_name,op_name,op_params,test_mode,"
                 "supported,passed,error_message"),)),
    EvidenceFormat(
        GGML_TEST, "patched fork's `ggml_test:` sample lines",
        (Rule(62, "`ggml_test: perf_` lines", lambda p: "ggml_test: perf_" in p.body, "body"),),
        ggml_test.parse,
        (Example("a sample", "ggml_test: perf_sample op=MUL_MAT_ID params=... sample=3/10 "
                 "runs=2048 avg_us=164.12"),)),
    EvidenceFormat(
        LLAMA_BENCH, "llama-bench (`-o json|jsonl|csv|sql`, markdown)",
        (Rule(11, "JSON holding `\"avg_ns\"`, `\"avg_ts\"` or `\"samples_ns\"`",
              lambda p: p.json_like and ('"avg_ns"' in p.head or '"avg_ts"' in p.head
                                         or '"samples_ns"' in p.head)),
         Rule(51, "`INSERT INTO llama_bench` / `CREATE TABLE IF NOT EXISTS llama_bench`",
              lambda p: "INSERT INTO LLAMA_BENCH" in p.upper
              or "TABLE IF NOT EXISTS LLAMA_BENCH" in p.upper),
         Rule(52, "`INSERT INTO test (` with `avg_ns` / `avg_ts` (before the table was renamed)",
              lambda p: _OLD_BENCH_SQL.search(p.head[:20000]) is not None
              and ("AVG_NS" in p.upper or "AVG_TS" in p.upper)),
         Rule(53, "a markdown table header with `t/s`, wherever it sits",
              lambda p: llama_bench_md.has_table(p.head)),
         Rule(55, "a first line with an `avg_ns` or `avg_ts` column",
              lambda p: bool(p.first_columns & {"avg_ns", "avg_ts"}))),
        llama_bench.parse,
        (Example("markdown (default; also in fences, among stderr, without outer pipes, "
                 "2023's `pp 512`)", "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | pp512 "
                 "| 4125.44 ± 21.07 |"),
         Example("`-o json` / `jsonl`", '{"build_commit": "8cf427ff", "n_prompt": 512, '
                 '"avg_ns": 70497220, "avg_ts": 7263.609157, ...}'),
         Example("`-o csv`", '"8cf427ff","5163",...,"70285660","982040","7285.676949",'
                 '"100.064434"'),
         Example("`-o sql` (table `llama_bench`, or `test` before it was renamed)",
                 "INSERT INTO test (build_commit, ..., avg_ts, stddev_ts) VALUES "
                 "('8cf427ff', ...);"))),
    EvidenceFormat(
        PERPLEXITY, "llama-perplexity output (PPL, KL divergence)",
        (Rule(60, "`Final estimate: PPL`, `Mean KLD:`, `KL-divergence statistics`, ...",
              lambda p: any(m in p.body for m in _PERPLEXITY), "body"),),
        perplexity.parse,
        (Example("final line (plain, behind a log prefix, a fork's wording)",
                 "0.01.492.933 I Final estimate: PPL = 10.2215 +/- 3.25179"),
         Example("`--kl-divergence` (today / early 2024)", "Mean    KLD:   0.017475 ±   "
                 "0.000763` / `===== KL-divergence statistics` + `Average:   0.010623 ±   "
                 "0.000065"))),
    EvidenceFormat(
        EVIDENCE_JSON, "meshcert evidence JSON (merged)",
        (Rule(10, "an object whose first 2 kB hold `\"schema\"` and `\"meshcert.evidence\"`",
              lambda p: p.start == "{" and '"schema"' in p.head[:2000]
              and '"meshcert.evidence"' in p.head[:2000]),),
        None,
        (Example("its start", '{"schema": "meshcert.evidence", "version": 1, ...}'),)),
    # mesh-llm v0.79 (../shared/spec/bench-formats.md), by the keys of the decoded JSON
    EvidenceFormat(
        PERF_HISTORY, "performance history JSONL (spec 8)",
        (_mesh(20, "rows with `cohort_key` and `source_sha`",
               _has("cohort_key", "source_sha"), ("cohort_key", "source_sha"),
               top=("cohort_key",)),),
        perf_history.parse,
        (Example("a row", '{"schema_version":1,"source_sha":"9f3c...","cohort_key":"5be1...",'
                 '"output_tokens_per_second":402.8,"ttft_ms_mean":187.0,"complete":true}'),),
        files="history JSONL (or a one-row JSON shard)",
        rows="every top-level number (kind `history`; cohort_key, source_sha, created_utc, "
             "complete in `extra`)",
        refused="`schema_version` not 1 (schema 3), a `cohort_key` that is not the SHA-256 of "
                "its cohort"),
    EvidenceFormat(
        AB_COMPARISON, "adaptive / mixed A/B comparison.json (spec 9)",
        (_mesh(21, "`comparison.paired_delta_percent` or `comparison.qualified`; or `cells` "
               "with `comparison_admitted` or an `adaptive_matrix_*` / `mixed_matrix_*` status",
               _is_ab, ("paired_delta_percent",), ("cells", "comparison_admitted"),
               ("cells", "qualified"), top=("comparison", "cells")),),
        ab_comparison.parse,
        (Example("a paired delta", '"output_tokens_per_second": {"round_deltas": [4.8, 5.1, '
                 '5.4], "median": 5.1, "ci95": [4.8, 5.4]}'),),
        files="adaptive / mixed comparison.json",
        rows="an `ab_delta` row per `paired_delta_percent` metric (ci95, round_deltas in "
             "`extra`); cell summaries; A/B decisions per metric from them",
        refused="named with the value that decided it: `comparison_admitted: false`, "
                "`status: adaptive_matrix_failed`, the `error` text (a parity mismatch), "
                "`comparison.output_parity: false`; mixed: `comparison.qualified` not true. "
                "A ci95 with lower > upper or a non-numeric median: a problem, no row"),
    EvidenceFormat(
        COMPETITIVE, "competitive benchmark report.json (spec 7)",
        (_mesh(22, "an object with `report_complete`, `requested_cells` or `rows[].cell`",
               _is_competitive, ("report_complete",), ("requested_cells",),
               top=("report_complete", "requested_cells", "rows")),),
        competitive.parse_report,
        (Example("a cell", '{"cell": {"platform": "h100", "model": "qwen3-8b", "workload": '
                 '"synthetic", "arm": "mesh", "concurrency": 1, "output_tokens": 256}, '
                 '"throughput": {"output_tokens_per_second": 402.8}, "complete": true}'),),
        files="report.json",
        rows="one per cell and number of its `throughput` (`parity` in `extra`)",
        refused="`report_complete: false` (partial); rows with `complete: false`; a cell "
                "given twice (a problem; none of its rows is used)"),
    EvidenceFormat(
        PROMOTION, "competitive promotion.json (spec 7)",
        (_mesh(23, "a list of groups with `candidates`", _is_promotion,
               ("candidates", "synthetic_mean_percent"), start="["),),
        competitive.parse_promotion,
        (Example("a group", '[{"platform": "h100", "model": "qwen3-8b", "candidates": [{"arm": '
                 '"mesh-adaptive", "synthetic_mean_percent": 6.9, ...}], "winner": '
                 '"mesh-adaptive"}]'),),
        files="promotion.json",
        rows="each candidate's numbers (`eligible`, `winner` in `extra`)", refused="-"),
    EvidenceFormat(
        SKIPPY_FOCUSED, "skippy-bench focused-runtime-report.json (spec 2)",
        (_mesh(24, "`scenario` with `stage_count`, or with `mode` and `outputs`",
               _either(_has("scenario", "stage_count"), _has("scenario", "mode", "outputs")),
               ("scenario", "stage_count"), ("scenario", "mode", "outputs"), top=("scenario",)),),
        skippy_focused.parse,
        (Example("its start", '{"schema_version": 1, "scenario": "first-token", "mode": '
                 '"executed", "stage_count": 2, "summary": {"ttft_ms_p50": 88, ...}}'),),
        files="focused-runtime-report.json",
        rows="`summary`, `latency_ms`, `token_counts`, `throughput_tokens_per_second`",
        refused="`mode` not `executed` (`schema-smoke`), `schema-smoke-*` outputs"),
    EvidenceFormat(
        SPEC_BENCH, "llama-spec-bench `--json` / DFlash stderr (spec 5)",
        (_mesh(25, "`speculative_window` or `target_model_path`",
               _either(_has("speculative_window"), _has("target_model_path")),
               ("speculative_window",), ("target_model_path",),
               top=("speculative_window", "target_model_path")),
         Rule(41, "not JSON, with `attached dflash` (a DFlash stderr log)",
              lambda p: not p.json_like and "attached dflash" in p.head)),
        spec_bench.parse,
        (Example("`--json`", '{"speculative_window":4,"summary":{"accept_rate":0.61,'
                 '"speculative_speedup_vs_baseline":1.37}}'),
         Example("DFlash stderr", "attached dflash draft block_size=16 ...")),
        files="`--json` (strategy from a sibling `<stem>.stderr`), a DFlash stderr log",
        rows="every number of `summary`; stderr: `rate=`, `mean_accepted/window=`, "
             "`target/draft speculative`",
        refused="`mismatched_prompts` > 0"),
    EvidenceFormat(
        METRICS_SERVER, "metrics-server report.json / emit-fixture (spec 6)",
        (_mesh(26, "`telemetry_loss`", _has("telemetry_loss"),
               ("telemetry_loss",), top=("telemetry_loss",)),
         Rule(40, "`emitted fixture span for run_id=` (emit-fixture: refused)",
              lambda p: "emitted fixture span for run_id=" in p.head[:20000])),
        metrics_server.parse,
        (Example("report.json", '{"counts": {"spans": 120, "requests": 10, "stages": 2}, '
                 '"telemetry_loss": {"dropped_events": 0, "export_errors": 0}, "stages": []}'),),
        files="report.json",
        rows="`counts`, `telemetry_loss`; with any loss every row carries `extra[\"flag\"]` "
             "and the file a `flagged` problem",
        refused="`emit-fixture` output"),
    EvidenceFormat(
        SKIPPY_EVAL, "skippy-bench `eval run` run.json / raw/speed-bench.json (spec 4)",
        (_mesh(27, "`eval_id`; or `completed_samples`, or `summary[]` / `results[]` with a "
               "`category` and speed-bench fields", _is_eval, ("eval_id",),
               ("completed_samples",),
               top=("eval_id", "completed_samples", "results")),),
        skippy_eval.parse,
        (Example("raw/speed-bench.json", '{"completed_samples": 38, "failed_samples": 2, '
                 '"summary": [{"category": "overall", "avg_pred_t_s": 51.25, "avg_latency": '
                 '1.83, ...}], "results": [...]}'),
         Example("run.json", '{"eval_id": "speed-bench", "model": "qwen3-8b", "metrics": '
                 '{"completion_tok_s": 52.5, ...}}')),
        files="eval run.json, raw/speed-bench.json",
        rows="every number of `metrics`; speed-bench normalised as mesh-llm does (the "
             "sample counts, token sums over `results[]`, the `overall` row of `summary[]`, "
             "`avg_latency` s x 1000)",
        refused="`dry_run`, `success: false`, `timed_out`; `telemetry.status: unavailable` is "
                "`flagged` (rows kept); no (or two) `overall` rows: a problem naming what is "
                "missing; a `results[]` token count that is not an integer >= 0: a problem, "
                "not summed"),
    EvidenceFormat(
        TOKEN_LENGTHS, "skippy-bench token-lengths summary (spec 10)",
        (_mesh(28, "`exceeds_context` and `row_count`",
               _has("exceeds_context", "row_count"),
               ("exceeds_context", "row_count"), top=("exceeds_context",)),),
        token_lengths.parse,
        (Example("a summary", '{"row_count": 40, "fits_context": 40, "exceeds_context": 0, '
                 '"prompt_tokens_p95": 1630}'),),
        files="token-lengths summary",
        rows="every top-level number; `exceeds_context` > 0: every row carries "
             "`extra[\"flag\"]` and the file a `flagged` problem (not promotable)",
        refused="negative counts, or `fits_context + exceeds_context` other than "
                "`row_count`: a problem, none of the counts used"),
    EvidenceFormat(
        SKIPPY_LOCAL, "skippy-bench local-single / local-split-compare (spec 3)",
        (_mesh(29, "`text_response`; or `matches` with `split`",
               _either(_has("text_response"), _has("matches", "split")),
               ("text_response",), ("matches", "split"), top=("text_response", "matches")),),
        skippy_local.parse,
        (Example("local-split-compare", '{"mode": "local-split-compare", "matches": true, '
                 '"baseline": {...}, "split": {"boundary": {"payload_bytes": 8192}}}'),),
        files="local-single / local-split-compare output",
        rows="`report_counts`; a `mesh_parity` row (`passed` = `matches`) and the boundary "
             "bytes", refused="-"),
    EvidenceFormat(
        SKIPPY_RUN, "skippy-bench `run` driver-result.json (spec 1)",
        (_mesh(30, "`prompt_count` with `summary`, or `results[]` with `ttft_ms`", _is_run,
               ("prompt_count", "summary"), ("results", "ttft_ms"),
               top=("prompt_count", "results")),),
        skippy_run.parse,
        (Example("its start", '{"prompt_count":2,"max_new_tokens":32,"summary":{"ttft_ms_p50":'
                 '88,"ttft_ms_mean":91.5,"generated_tokens_per_second":41.7}}'),),
        files="`<run>/driver-result.json` (setup from its `deployment-plan.json` and "
              "`configs/stage-N.json`)",
        rows="every number of `summary` (op `skippy-bench run`) and of each `results[i]` "
             "(`sample` = i+1)",
        refused="stage layer counts differing by more than one"),
)

BY_NAME: dict[str, EvidenceFormat] = {f.name: f for f in EVIDENCE_FORMATS}
PARSERS: dict[str, Parser] = {f.name: f.parse for f in EVIDENCE_FORMATS if f.parse is not None}
RULES: tuple[tuple[Rule, str], ...] = tuple(sorted(
    ((rule, f.name) for f in EVIDENCE_FORMATS for rule in f.rules), key=lambda pair: pair[0].order))


def unrecognised_message() -> str:
    """The problem of a file no rule recognises: every format it could have been."""
    titles = [f.title for f in EVIDENCE_FORMATS if f.rules]
    return "unrecognised format: none of " + "; ".join(titles)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def formats_table() -> str:
    """The markdown table of every format: name, how it is recognised, a line of it."""
    out = ["| format | recognised by | one line of it |", "| --- | --- | --- |"]
    for f in EVIDENCE_FORMATS:
        says = "; ".join(r.says for r in sorted(f.rules, key=lambda r: r.order)) \
            or f"its rows come out of a `{f.within}` file (test mode: `: OK` / `FAIL` cases)"
        for i, ex in enumerate(f.examples):
            name = f"`{f.name}`: {f.title}" if i == 0 else f"`{f.name}`: {ex.what}"
            out.append(f"| {_cell(name)} | {_cell(says) if i == 0 else ''} | "
                       f"`{_cell(ex.line)}` |")
    return "\n".join(out) + "\n"


def mesh_table() -> str:
    """The markdown table of the mesh-llm formats: files, rows, refusals."""
    out = ["| format (`format` column) | file | rows (`metric` = the producer's field name) "
           "| refused (a problem naming why; no rows) or flagged |", "| --- | --- | --- | --- |"]
    for f in EVIDENCE_FORMATS:
        if f.rows:
            out.append(f"| `{f.name}` | {_cell(f.files)} | {_cell(f.rows)} | "
                       f"{_cell(f.refused)} |")
    return "\n".join(out) + "\n"
