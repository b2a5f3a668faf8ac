"""metrics-server report.json and emit-fixture (spec section 6); fixtures derived by hand."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal, values


def test_counts_without_loss() -> None:
    result = ingest("metrics-report.json")
    assert values(result)["spans"] == (120.0, "count", "/counts/spans")
    assert "hosts=[a,b]" in result.table.iloc[0]["params"]


def test_lost_telemetry_and_the_fixture_emitter_are_refused() -> None:
    assert refusal(ingest("metrics-loss.json")) == (
        0, "rejected", "not evidence: telemetry lost (dropped_events=3); the spec allows none")
    rows, kind, reason = refusal(ingest("emit-fixture.txt"))
    assert (rows, kind) == (0, "rejected") and "fixture emitter" in reason
    assert ingest("emit-fixture.txt").problems[0].line == 2
