"""skippy-bench token-lengths summary (spec section 10); fixtures derived by hand."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal, values


def test_a_summary_that_fits_gives_its_percentiles() -> None:
    result = ingest("token-lengths.json")
    assert values(result)["prompt_tokens_p95"] == (1630.0, "count", "/prompt_tokens_p95")
    assert result.table.iloc[0]["params"] == "corpus=smoke-v1"


def test_prompts_over_the_context_are_not_promotable() -> None:
    assert refusal(ingest("token-lengths-exceeds.json")) == (
        0, "rejected", "not evidence: 3 prompt(s) exceed the context: the corpus is not "
        "promotable")
