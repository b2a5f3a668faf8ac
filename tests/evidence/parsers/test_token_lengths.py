"""skippy-bench token-lengths summary (spec section 10). No real mesh-llm file exists here:
every fixture is derived by hand from the spec (tests/evidence/data/mesh/README.md)."""

from __future__ import annotations

from meshcert.evidence.ingest import ingest_texts
from tests.evidence.parsers.helpers import ingest, values


def test_a_summary_that_fits_gives_its_percentiles() -> None:
    result = ingest("token-lengths.json")
    assert values(result)["prompt_tokens_p95"] == (1630.0, "count", "/prompt_tokens_p95")
    assert result.table.iloc[0]["params"] == "corpus=smoke-v1"
    assert result.problems == []


def test_prompts_over_the_context_keep_their_values_flagged_not_promotable() -> None:
    result = ingest("token-lengths-exceeds.json")
    got = values(result)
    assert got["exceeds_context"][0] == 3.0 and got["prompt_tokens_p50"][0] == 5120.0
    assert {r["flag"] for r in result.table["extra"]} == {"exceeds_context=3"}
    (problem,) = result.problems
    assert problem.kind == "flagged"
    assert problem.reason.startswith("exceeds_context=3: 3 prompt(s) exceed the context, so "
                                     "the corpus is not promotable")


def test_negative_or_contradicting_counts_are_findings_never_values() -> None:
    result = ingest("token-lengths-negative.json")
    assert set(values(result)) == {"prompt_tokens_p50", "prompt_tokens_p95"}
    (problem,) = result.problems
    assert (problem.line, problem.excerpt) == (1, "fits_context=-2")
    assert "negative count fits_context" in problem.reason
    odd = ingest_texts({"t.json": '{"row_count": 10, "fits_context": 8, "exceeds_context": 0,'
                                  ' "prompt_tokens_p50": 90}'})
    assert set(values(odd)) == {"prompt_tokens_p50"}
    assert "not row_count" in odd.problems[0].reason
