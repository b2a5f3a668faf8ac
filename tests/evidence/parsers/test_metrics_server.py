"""metrics-server report.json and emit-fixture (spec section 6). No real mesh-llm file exists
here: every fixture is derived by hand from the spec (tests/evidence/data/mesh/README.md)."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal, values


def test_counts_without_loss() -> None:
    result = ingest("metrics-report.json")
    assert values(result)["spans"] == (120.0, "count", "/counts/spans")
    assert "hosts=[a,b]" in result.table.iloc[0]["params"]
    assert "flag" not in result.table.iloc[0]["extra"]


def test_lost_telemetry_keeps_the_values_and_every_row_carries_the_flag() -> None:
    result = ingest("metrics-loss.json")
    got = values(result)
    assert got["spans"] == (90.0, "count", "/counts/spans")
    assert got["dropped_events"] == (3.0, "count", "/telemetry_loss/dropped_events")
    assert {r["flag"] for r in result.table["extra"]} == {"telemetry_loss: dropped_events=3"}
    (problem,) = result.problems
    assert (problem.kind, problem.line) == ("flagged", 1)
    assert problem.reason.startswith("telemetry_loss: dropped_events=3: spans were lost")


def test_the_fixture_emitter_is_refused() -> None:
    rows, kind, reason = refusal(ingest("emit-fixture.txt"))
    assert (rows, kind) == (0, "rejected") and "fixture emitter" in reason
    assert ingest("emit-fixture.txt").problems[0].line == 2
