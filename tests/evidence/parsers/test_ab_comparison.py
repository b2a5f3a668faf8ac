"""A/B comparison.json (spec section 9). No real mesh-llm comparison.json exists here: every
fixture is derived by hand from the spec (tests/evidence/data/mesh/README.md)."""

from __future__ import annotations

from meshcert.evidence.ab import decide_ab
from meshcert.evidence.stats import records
from tests.evidence.parsers.helpers import ingest, refusal


def test_paired_deltas_become_rows_with_their_interval() -> None:
    table = ingest("comparison-adaptive.json").table
    delta = table[table.kind == "ab_delta"].set_index("metric")
    row = delta.loc["output_tokens_per_second"]
    assert row["value"] == 5.1 and row["extra"]["ci95"] == [4.8, 5.4]
    assert row["extra"]["round_deltas"] == [4.8, 5.1, 5.4, 4.9, 5.2]
    assert "new=v0.79.0" in row["params"] and "old=v0.78.0" in row["params"]
    assert row["source_line"] == 5      # the metric's own line of the pretty-printed file


def test_a_refusal_names_every_field_and_value_that_decided_it() -> None:
    result = ingest("comparison-failed.json")
    rows, kind, reason = refusal(result)
    assert (rows, kind, reason) == (0, "rejected", (
        "not evidence: the comparison was not admitted (comparison_admitted: false, "
        'status: adaptive_matrix_failed, error: "output parity mismatch in round 2")'))
    assert result.problems[0].line == 9     # the line holding comparison_admitted
    rows, kind, reason = refusal(ingest("comparison-mixed.json"))
    assert (rows, kind, reason) == (0, "rejected", (
        "not evidence: the mixed prefill comparison is not qualified (comparison.qualified: "
        "false, status: mixed_matrix_completed)"))


def test_a_qualified_mixed_comparison_is_decided_by_metric_direction() -> None:
    """8 rounds each: throughput down in every round (worse) and prefill p95 down in every
    round (better, ms): exact p 2/256 each, Holm over the 2 metrics 4/256: reject (any metric
    rejected rejects the comparison)."""
    result = ingest("comparison-mixed-qualified.json")
    assert result.problems == []
    (decision,) = decide_ab(records(result.table))
    verdicts = {m.metric: (m.better, m.verdict) for m in decision.metrics}
    assert verdicts == {"output_tokens_per_second": ("higher", "reject"),
                        "prefill_elapsed_ms_p95": ("lower", "promote")}
    assert (decision.comparison, decision.verdict) == ("fixed-prefill -> mixed-prefill",
                                                       "reject")


def test_bad_intervals_and_non_numbers_are_findings_at_their_line_never_values() -> None:
    result = ingest("comparison-bad-intervals.json")
    assert list(result.table["metric"]) == ["output_tokens_per_second"]
    found = {(p.line, p.reason) for p in result.problems}
    assert found == {
        (7, "/comparison/paired_delta_percent/ttft_ms_p50/ci95 = [2.5, -3]: lower > upper "
            "(no decision from ttft_ms_p50)"),
        (8, "paired delta of makespan_ms has no numeric median (no decision from it)")}
    nan = ingest("comparison-nan.json")
    assert nan.row_count == 0
    (problem,) = nan.problems
    assert (problem.line, problem.kind, problem.excerpt) == (6, "rejected", "NaN")
    assert "non-finite number NaN" in problem.reason
