"""llama-spec-bench --json and DFlash stderr (spec section 5); fixtures derived by hand."""

from __future__ import annotations

from tests.evidence.parsers.helpers import ingest, refusal, values


def test_summary_rows_and_a_draft_model_setup() -> None:
    result = ingest("spec-bench.json")
    got = values(result)
    assert got["speculative_speedup_vs_baseline"] == (
        1.37, "x", "/summary/speculative_speedup_vs_baseline")
    assert got["accept_rate"] == (0.61, "ratio", "/summary/accept_rate")
    setup = result.table.iloc[0]["param_dict"]
    assert setup["strategy"] == "draft-model" and setup["speculative_window"] == 4
    assert setup["target"] == "qwen3-8b-q4_k_m.gguf" and setup["cache_type_k"] == "f16"


def test_the_strategy_comes_from_the_sibling_stderr() -> None:
    setup = ingest("dflash/spec-bench.json").table.iloc[0]["param_dict"]
    assert (setup["strategy"], setup["block_size"]) == ("dflash2", 16)


def test_a_dflash_stderr_log_gives_its_summary_lines() -> None:
    result = ingest("dflash.stderr.log")
    got = values(result)
    assert got["accept_rate"] == (0.625, "ratio", "line 3: rate")
    assert got["speculative_speedup_vs_baseline"][0] == 1.84
    assert result.table.iloc[0]["param_dict"]["strategy"] == "dflash"
    assert set(result.table.source_line) == {3, 4}


def test_mismatched_prompts_are_not_speedup_evidence() -> None:
    rows, kind, reason = refusal(ingest("spec-bench-mismatch.json"))
    assert (rows, kind) == (0, "rejected") and "2 prompt(s)" in reason
