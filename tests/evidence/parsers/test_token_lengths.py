"""skippy-bench token-lengths summary (spec section 10). Fixtures derived by hand from the spec
(tests/evidence/data/mesh/README.md), and the summary of mesh-llm's own unit test (the last)."""

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


def test_the_producers_own_summary_keys_its_setup_and_flags_the_prompt_over_the_context() -> None:
    """token-lengths-rs-summary.json: the summary mesh-llm's `summarize` writes for the two rows
    of its unit test `summarizes_context_fit` (Mesh-LLM/mesh-llm
    skippy/crates/skippy-bench/src/token_lengths.rs @2ea4c6c3: ctx 10, generation limit 4,
    prompts of 3 and 8 tokens, the second over the context; percentiles by the file's
    `round((n-1)p)`, Rust's round-half-away, so p50 is 8)."""
    result = ingest("token-lengths-rs-summary.json")
    got = {metric: value for metric, (value, _, _) in values(result).items()}
    assert (got["row_count"], got["fits_context"], got["exceeds_context"]) == (2, 1, 1)
    assert (got["prompt_tokens_max"], got["requested_tokens_max"]) == (8, 12)
    assert got["prompt_tokens_p50"] == 8
    assert result.table.iloc[0]["params"] == ("model_path=model.gguf,prompt_corpus=corpus.jsonl,"
                                              "ctx_size=10,generation_limit=4,enable_thinking=0")
    (problem,) = result.problems
    assert problem.kind == "flagged" and problem.reason.startswith("exceeds_context=1: ")
