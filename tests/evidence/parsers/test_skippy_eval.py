"""eval run.json and raw/speed-bench.json (spec section 4); fixtures derived by hand."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal, values


def test_run_metrics_kept_and_lost_telemetry_flagged() -> None:
    result = ingest("eval-run.json")
    got = values(result)
    assert got["completion_tok_s"] == (52.5, "tok/s", "/metrics/completion_tok_s")
    assert got["draft_accept_rate"] == (0.64, "ratio", "/metrics/draft_accept_rate")
    assert [p.kind for p in result.problems] == ["flagged"]
    assert "telemetry unavailable" in result.problems[0].reason
    assert "model=qwen3-8b" in result.table.iloc[0]["params"]


def test_dry_run_is_refused() -> None:
    rows, kind, reason = refusal(ingest("eval-dry-run.json"))
    assert (rows, kind, reason) == (0, "rejected", "not evidence: eval run with dry_run=true")


def test_speed_bench_is_normalised_as_the_spec_says() -> None:
    got = values(ingest("speed-bench.json"))
    assert got["request_count"][0] == 40.0 and got["failed_count"][0] == 2.0
    assert got["draft_tokens"][0] == 150.0 and got["draft_accepted_tokens"][0] == 90.0
    assert got["prompt_tok_s"] == (820.5, "tok/s", "/results/1/avg_prompt_t_s")
    assert got["avg_latency_ms"] == (1830.0, "ms", "/results/1/avg_latency")
