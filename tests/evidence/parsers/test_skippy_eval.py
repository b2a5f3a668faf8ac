"""eval run.json and raw/speed-bench.json (spec section 4). speed-bench-evals-rs.json is the
producer's own fixture (mesh-llm's unit test in sb/evals.rs); the others are derived by hand
from the spec (tests/evidence/data/mesh/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

from meshcert.evidence.ingest import ingest_files
from tests.evidence.parsers.helpers import ingest, refusal, values


def test_run_metrics_kept_and_lost_telemetry_flagged() -> None:
    result = ingest("eval-run.json")
    got = values(result)
    assert got["completion_tok_s"] == (52.5, "tok/s", "/metrics/completion_tok_s")
    assert got["draft_accept_rate"] == (0.64, "ratio", "/metrics/draft_accept_rate")
    assert [p.kind for p in result.problems] == ["flagged"]
    assert "telemetry unavailable" in result.problems[0].reason
    assert "model=qwen3-8b" in result.table.iloc[0]["params"]
    lines = result.table.set_index("metric")["source_line"]
    assert (lines["completion_tok_s"], lines["draft_accept_rate"]) == (4, 5)  # their own lines
    assert result.problems[0].line == 6         # telemetry.status


def test_dry_run_is_refused() -> None:
    rows, kind, reason = refusal(ingest("eval-dry-run.json"))
    assert (rows, kind, reason) == (0, "rejected", "not evidence: eval run with dry_run=true")


def test_speed_bench_gives_mesh_llms_own_figures() -> None:
    """The producer's fixture: mesh-llm's unit test
    `speed_bench_metrics_extract_token_rates_and_acceptance` (Mesh-LLM/mesh-llm,
    skippy/crates/skippy-bench/src/evals.rs @1319b46e) writes this raw/speed-bench.json
    (speed-bench-evals-rs.json, verbatim) and asserts these figures of `speed_bench_metrics`
    (sb/evals/run.rs @37e1d66f): counts as given, token sums over results[], the rates of
    summary[]'s overall row."""
    result = ingest("speed-bench-evals-rs.json")
    assert result.problems == []
    got = {metric: value for metric, (value, _, _) in values(result).items()}
    assert got == {"request_count": 2, "failed_count": 1, "prompt_tokens": 30,
                   "completion_tokens": 12, "total_tokens": 42, "draft_tokens": 12,
                   "draft_accepted_tokens": 9, "prompt_tok_s": 123.5,
                   "completion_tok_s": 45.25, "avg_latency_ms": 1500.0,
                   "draft_accept_rate": 0.75}


def test_speed_bench_rates_come_from_summarys_overall_row() -> None:
    got = values(ingest("speed-bench.json"))
    assert got["request_count"][0] == 38.0 and got["failed_count"][0] == 2.0
    assert got["draft_tokens"][0] == 150.0 and got["draft_accepted_tokens"][0] == 90.0
    assert got["total_tokens"] == (1000.0, "count", "/results/*/total_tokens")
    assert got["prompt_tok_s"] == (820.5, "tok/s", "/summary/1/avg_prompt_t_s")
    assert got["avg_latency_ms"] == (1830.0, "ms", "/summary/1/avg_latency")
    assert got["draft_accept_rate"] == (0.6, "ratio", "/summary/1/accept_rate")


def test_speed_bench_without_its_overall_row_says_what_is_missing() -> None:
    result = ingest("speed-bench-no-overall.json")
    assert set(values(result)) == {"request_count", "failed_count", "draft_tokens",
                                   "draft_accepted_tokens"}
    (problem,) = result.problems
    assert (problem.line, problem.kind) == (2, "incomplete")
    assert problem.reason.startswith('speed-bench raw file has no summary[] row with category '
                                     '"overall"')


def test_a_large_raw_speed_bench_on_its_own_is_read(tmp_path: Path) -> None:
    """raw/speed-bench.json as `eval run` leaves it: the per-sample results first (over 1 MB,
    past the detection head), the summary and counts last, pretty-printed."""
    results = [{"sample_id": i, "prompt_tokens": 300, "completion_tokens": 64,
                "total_tokens": 364, "draft_n": 20, "draft_n_accepted": 12,
                "prompt": "x" * 200} for i in range(6000)]
    summary = [{"category": "coding", "avg_prompt_t_s": 800.0},
               {"category": "overall", "avg_prompt_t_s": 810.0, "avg_pred_t_s": 50.5,
                "avg_latency": 1.91, "accept_rate": 0.6}]
    raw = tmp_path / "raw" / "speed-bench.json"
    raw.parent.mkdir()
    raw.write_text(json.dumps({"model": "qwen3-8b", "results": results, "summary": summary,
                               "completed_samples": 5990, "failed_samples": 10}, indent=1))
    result = ingest_files([raw])
    got = values(result)
    assert result.sources[0].format == "skippy-eval" and result.problems == []
    assert got["request_count"][0] == 5990.0 and got["draft_tokens"][0] == 120000.0
    assert got["completion_tokens"][0] == 6000 * 64
    assert got["avg_latency_ms"] == (1910.0, "ms", "/summary/1/avg_latency")
    row = result.table.set_index("metric").loc["avg_latency_ms"]
    lines = raw.read_text().split("\n")
    assert row["source_line"] == lines.index('   "avg_latency": 1.91,') + 1


def test_speed_bench_sums_only_token_counts_as_mesh_llm_does(tmp_path: Path) -> None:
    """mesh-llm's `sum_u64_field` adds the values that are JSON integers >= 0 and skips the rest;
    a negative or fractional token count was added here (30 - 15 = 15, or 30.5). Each skipped
    value is a problem at its own line, never summed; an absent (null) one is no value."""
    doc = json.loads((Path(__file__).parents[1] / "data" / "mesh" /
                      "speed-bench-evals-rs.json").read_text())
    doc["results"][0].update(prompt_tokens=-5, completion_tokens=2.5, total_tokens=None)
    path = tmp_path / "speed-bench.json"
    path.write_text(json.dumps(doc, indent=2))
    result = ingest_files([path])
    got = {metric: value for metric, (value, _, _) in values(result).items()}
    assert (got["prompt_tokens"], got["completion_tokens"], got["total_tokens"]) == (20, 7, 27)
    lines = path.read_text().splitlines()
    assert [(p.kind, lines[(p.line or 0) - 1].strip(), p.reason) for p in result.problems] == [
        ("malformed", '"prompt_tokens": -5,', "results[0].prompt_tokens is not a token count "
         "(an integer >= 0): not summed (mesh-llm's sum skips it too)"),
        ("malformed", '"completion_tokens": 2.5,', "results[0].completion_tokens is not a "
         "token count (an integer >= 0): not summed (mesh-llm's sum skips it too)")]


def test_speed_bench_counts_are_integers_as_mesh_llm_reads_them(tmp_path: Path) -> None:
    """`completed_samples: 2.5` was a request_count of 2.5; mesh-llm's `as_u64` reads none."""
    doc = json.loads((Path(__file__).parents[1] / "data" / "mesh" /
                      "speed-bench-evals-rs.json").read_text())
    doc.update(completed_samples=2.5, failed_samples=True)
    path = tmp_path / "speed-bench.json"
    path.write_text(json.dumps(doc, indent=2))
    result = ingest_files([path])
    got = values(result)
    assert "request_count" not in got and "failed_count" not in got
    assert got["prompt_tokens"][0] == 30
    assert [(p.line, p.reason) for p in result.problems] == [
        (2, "completed_samples is not a count (an integer >= 0): request_count not given "
            "(mesh-llm reads none either)"),
        (3, "failed_samples is not a count (an integer >= 0): failed_count not given (mesh-llm "
            "reads none either)")]
