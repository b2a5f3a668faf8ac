"""Competitive report.json and promotion.json (spec section 7). No real mesh-llm file exists
here: every fixture is derived by hand from the spec (tests/evidence/data/mesh/README.md)."""

from __future__ import annotations

from meshcert.evidence.parsers import detect
from tests.evidence.parsers.helpers import DATA, ingest, refusal


def test_report_rows_per_cell() -> None:
    table = ingest("competitive-report.json").table
    mesh = table[(table.metric == "output_tokens_per_second")]
    assert list(mesh["value"]) == [402.8, 431.0]
    assert "arm=mesh-adaptive" in mesh.iloc[1]["params"]
    assert mesh.iloc[1]["extra"]["pointer"] == "/rows/1/throughput/output_tokens_per_second"


def test_a_report_holding_its_promotion_is_a_report_not_a_promotion() -> None:
    """The report carries `promotion` (candidates, synthetic_mean_percent): told apart from
    promotion.json by its shape (an object with rows[].cell, not a list of groups)."""
    name = "competitive-with-promotion.json"
    assert detect((DATA / name).read_text(), name) == "competitive-report"
    result = ingest(name)
    assert result.problems == []
    table = result.table
    cells = table[table.metric == "output_tokens_per_second"]
    assert list(cells["value"]) == [402.8, 431.0, 1210.0]
    assert list(cells["source_line"]) == [11, 14, 17]
    last = cells.iloc[2]
    assert "workload=thoughtworks" in last["params"] and "concurrency=4" in last["params"]
    assert (last["extra"]["unit"], last["extra"]["parity"]) == ("tok/s", True)
    assert len(table) == 6          # one row per cell and metric


def test_a_partial_report_is_refused_naming_the_field() -> None:
    assert refusal(ingest("competitive-partial.json")) == (
        0, "rejected", "not evidence: report_complete: false (a partial competitive report; "
        "only a complete one is evidence)")


def test_duplicate_cells_are_findings_and_give_no_value() -> None:
    result = ingest("competitive-duplicate-cells.json")
    assert list(result.table["value"]) == [380.2]       # only the llama cell is unambiguous
    assert [(p.line, p.reason) for p in result.problems] == [
        (line, "duplicate cell: the same cell is given at /rows/0, /rows/2; none of their "
               "values is used (which one is the measurement is unknown)") for line in (7, 11)]


def test_promotion_candidates_keep_eligibility_and_winner() -> None:
    table = ingest("promotion.json").table
    row = table[table.metric == "synthetic_mean_percent"].iloc[0]
    assert (row["value"], row["extra"]["unit"], row["extra"]["winner"]) == (
        6.9, "%", "mesh-adaptive")
    assert row["extra"]["pointer"] == "/0/candidates/0/synthetic_mean_percent"
