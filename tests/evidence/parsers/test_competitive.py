"""Competitive report.json and promotion.json (spec section 7); fixtures derived by hand."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal


def test_report_rows_per_cell() -> None:
    table = ingest("competitive-report.json").table
    mesh = table[(table.metric == "output_tokens_per_second")]
    assert list(mesh["value"]) == [402.8, 431.0]
    assert "arm=mesh-adaptive" in mesh.iloc[1]["params"]
    assert mesh.iloc[1]["extra"]["pointer"] == "/rows/1/throughput/output_tokens_per_second"


def test_a_partial_report_is_refused() -> None:
    assert refusal(ingest("competitive-partial.json")) == (
        0, "rejected",
        "not evidence: the competitive report is partial (report_complete is not true)")


def test_promotion_candidates_keep_eligibility_and_winner() -> None:
    table = ingest("promotion.json").table
    row = table[table.metric == "synthetic_mean_percent"].iloc[0]
    assert (row["value"], row["extra"]["unit"], row["extra"]["winner"]) == (
        6.9, "%", "mesh-adaptive")
    assert row["extra"]["pointer"] == "/0/candidates/0/synthetic_mean_percent"
