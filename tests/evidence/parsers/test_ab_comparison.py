"""A/B comparison.json (spec section 9); fixtures derived by hand from the spec."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal


def test_paired_deltas_become_rows_with_their_interval() -> None:
    table = ingest("comparison-adaptive.json").table
    delta = table[table.kind == "ab_delta"].set_index("metric")
    row = delta.loc["output_tokens_per_second"]
    assert row["value"] == 5.1 and row["extra"]["ci95"] == [4.8, 5.4]
    assert row["extra"]["round_deltas"] == [4.8, 5.1, 5.4, 4.9, 5.2]
    assert "new=v0.79.0" in row["params"] and "old=v0.78.0" in row["params"]


def test_not_admitted_comparisons_are_refused() -> None:
    rows, kind, reason = refusal(ingest("comparison-failed.json"))
    assert (rows, kind, reason) == (0, "rejected", "not evidence: the comparison reports an "
                                    "error")
    rows, kind, reason = refusal(ingest("comparison-mixed.json"))
    assert (rows, kind) == (0, "rejected") and "comparison.qualified is true" in reason
