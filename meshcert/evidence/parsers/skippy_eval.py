"""skippy-bench `eval run`: run.json, and its raw/speed-bench.json (spec section 4).

run.json: not evidence when `dry_run`, `success` false or `timed_out`; `telemetry.status:
"unavailable"` is flagged (a `flagged` problem; the rows stay). Rows: every numeric field of
`metrics`. raw/speed-bench.json is normalised as mesh-llm's `speed_bench_metrics` does (spec
section 4; pinned by its unit test `speed_bench_metrics_extract_token_rates_and_acceptance`,
sb/evals.rs): completed_samples -> request_count, failed_samples -> failed_count; sums over
results[] (prompt_tokens, completion_tokens, total_tokens, draft_n -> draft_tokens,
draft_n_accepted -> draft_accepted_tokens); the `category: "overall"` row of summary[]:
avg_prompt_t_s -> prompt_tok_s, avg_pred_t_s -> completion_tok_s, avg_latency s x 1000 ->
avg_latency_ms, accept_rate -> draft_accept_rate.
Setup key: eval_id, model, endpoint_concurrency, harness_commit.
"""

from __future__ import annotations

from typing import Any, TypeGuard

from meshcert.evidence.parsers.base import FLAGGED, SKIPPY_EVAL, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
    MetricRows,
    items,
    load,
    number,
    obj,
    pointer,
    refuse,
    refuse_debug,
)

_KEY = ("eval_id", "model", "endpoint_concurrency", "harness_commit")


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(SKIPPY_EVAL)
    doc = load(text, source, out, "skippy-bench eval")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    if "eval_id" not in doc and ("completed_samples" in doc or "results" in doc
                                 or "summary" in doc):
        _speed_bench(doc, text, source, out)
        return out
    for flag, bad in (("dry_run", doc.get("dry_run") is True),
                      ("success", doc.get("success") is False),
                      ("timed_out", doc.get("timed_out") is True)):
        if bad:
            refuse(out, source, 1, f"{flag}={doc.get(flag)!r}",
                   f"eval run with {flag}={str(doc.get(flag)).lower()}")
            return out
    setup = {k: doc.get(k) for k in _KEY}
    lines = JsonLines(text)
    telemetry = obj(doc, "telemetry")
    if telemetry.get("status") == "unavailable":
        out.problem(source, lines.line("/telemetry/status"),
                    f"telemetry.status=unavailable {telemetry.get('detail') or ''}",
                    "telemetry unavailable: the eval's spans were not recorded (flagged; its "
                    "metrics are kept)", FLAGGED)
    if not isinstance(doc.get("metrics"), dict):
        out.problem(source, lines.line("/metrics"), "metrics=null", "eval run without metrics",
                    "incomplete")
        return out
    MetricRows(out, source, SKIPPY_EVAL, f"skippy-bench eval {doc.get('eval_id')}", setup,
               lines=lines).add_all(doc["metrics"], pointer("metrics"))
    return out


def _speed_bench(doc: dict[str, Any], text: str, source: str, out: ParsedFile) -> None:
    """mesh-llm's `speed_bench_metrics` (sb/evals/run.rs): the counts as given, sums over
    `results[]`, the rates of `summary[]`'s `overall` row."""
    lines = JsonLines(text)
    rows = MetricRows(out, source, SKIPPY_EVAL, "skippy-bench eval speed-bench",
                      {"eval_id": "speed-bench", "model": doc.get("model")}, lines=lines)
    for field, target in (("completed_samples", "request_count"),
                          ("failed_samples", "failed_count")):
        value = doc.get(field)
        if _is_count(value) or isinstance(value, int | float) and value < 0:
            rows.add(target, value, pointer(field))  # a negative count: the rows' own problem
        elif value is not None:
            out.problem(source, lines.line(pointer(field)), f"{pointer(field)} = {value!r}",
                        f"{field} is not a count (an integer >= 0): {target} not given "
                        "(mesh-llm reads none either)")
    results = items(doc, "results")
    for field, target in _SUMS:
        found = _counts(results, field, source, lines, out)
        if found:
            rows.add(target, sum(found), f"/results/*/{field}",
                     extra={"converted": f"sum of results[].{field}"})
    summary = items(doc, "summary")
    overall = [i for i, r in enumerate(summary) if isinstance(r, dict)
               and r.get("category") == "overall"]
    if len(overall) != 1:
        _no_overall(out, source, lines, summary, overall)
        return
    row = summary[overall[0]]
    base = pointer("summary", overall[0])
    rows.add("prompt_tok_s", row.get("avg_prompt_t_s"), base + "/avg_prompt_t_s")
    rows.add("completion_tok_s", row.get("avg_pred_t_s"), base + "/avg_pred_t_s")
    latency = number(row.get("avg_latency"))
    if latency is not None:
        rows.add("avg_latency_ms", latency * 1000, base + "/avg_latency",
                 extra={"converted": "avg_latency s x 1000"})
    rows.add("draft_accept_rate", row.get("accept_rate"), base + "/accept_rate")


# results[] field -> the metric its sum is (mesh-llm's EvalMetrics names)
_SUMS = (("prompt_tokens", "prompt_tokens"), ("completion_tokens", "completion_tokens"),
         ("total_tokens", "total_tokens"), ("draft_n", "draft_tokens"),
         ("draft_n_accepted", "draft_accepted_tokens"))


def _is_count(value: Any) -> TypeGuard[int]:
    """A JSON integer >= 0: what mesh-llm's `Value::as_u64` reads (2.0, -1, true are not)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _counts(results: list[Any], field: str, source: str, lines: JsonLines,
            out: ParsedFile) -> list[int]:
    """The values of results[].field that are token counts (JSON integers >= 0: what mesh-llm's
    `sum_u64_field` adds); any other value present is a problem, never added."""
    found: list[int] = []
    for i, r in enumerate(results):
        value = r.get(field) if isinstance(r, dict) else None
        if _is_count(value):
            found.append(value)
        elif value is not None:
            where = pointer("results", i, field)
            out.problem(source, lines.line(where), f"{where} = {value!r}",
                        f"results[{i}].{field} is not a token count (an integer >= 0): not "
                        "summed (mesh-llm's sum skips it too)")
    return found


def _no_overall(out: ParsedFile, source: str, lines: JsonLines, summary: list[Any],
                overall: list[int]) -> None:
    where = pointer("summary")
    at = ", ".join(pointer("summary", i) for i in overall)
    out.problem(source, lines.line(where) if summary else 1,
                f"{where}: {len(summary)} row(s)" + (f", overall at {at}" if at else ""),
                "speed-bench raw file has " + ("no summary[] row with category \"overall\""
                                               if not overall else f"{len(overall)} summary[] "
                                               "rows with category \"overall\"") +
                ": prompt_tok_s, completion_tok_s, avg_latency_ms and draft_accept_rate are "
                "not given", "incomplete")
