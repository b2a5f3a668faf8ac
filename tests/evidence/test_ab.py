"""A/B decisions from paired intervals with Holm (spec section 9). Round deltas derived by hand
from the spec's rule (no published mesh-llm comparison.json)."""

from __future__ import annotations

import json
from typing import Any

from meshcert.evidence.ab import decide_ab
from meshcert.evidence.ingest import ingest_texts
from meshcert.evidence.stats import records


def _comparison(old: str, deltas: dict[str, list[float]],
                ci95: list[float] | None = None) -> str:
    paired = {m: {"round_deltas": d, "median": sorted(d)[len(d) // 2],
                  "ci95": ci95 or [min(d), max(d)]} for m, d in deltas.items()}
    return json.dumps({"metadata": {"old": old, "new": "v0.79.0", "rounds": 5}, "cells": [],
                       "comparison": {"paired_delta_percent": paired, "output_parity": True},
                       "error": None, "comparison_admitted": True,
                       "status": "adaptive_matrix_admitted"})


def _decide(**files: str) -> dict[str, Any]:
    result = ingest_texts({f"{k}.json": v for k, v in files.items()})
    assert result.problems == []
    return {str(d.old): d for d in decide_ab(records(result.table))}


def test_wholly_better_promotes_worse_rejects_straddling_is_inconclusive() -> None:
    got = _decide(
        better=_comparison("better", {"output_tokens_per_second": [4.8, 5.1, 5.4, 4.9, 5.2]}),
        worse=_comparison("worse", {"output_tokens_per_second": [-4.0, -3.5, -5.0, -4.4, -3.9]}),
        noisy=_comparison("noisy", {"output_tokens_per_second": [3.0, -2.0, 1.0, -1.5, 2.0]}),
        ttft=_comparison("ttft", {"output_tokens_per_second": [2.0, 2.2, 1.9, 2.1, 2.4],
                                  "ttft_ms_p95": [6.0, 5.5, 7.0, 6.2, 5.9]}))
    assert {k: d.verdict for k, d in got.items()} == {
        "better": "promote", "worse": "reject", "noisy": "inconclusive", "ttft": "reject"}
    assert got["ttft"].reason == "ttft_ms_p95 is wholly worse (median +6.00%)"
    m = got["better"].metrics[0]
    assert m.p_adjusted is not None and m.p_adjusted < 0.05
    assert m.ci_low_adjusted is not None and m.ci_low_adjusted > 0


def test_holm_spans_the_family() -> None:
    """7 rounds, one of them negative: alone its bootstrap p (about 0.02 two-sided) clears
    0.05; with 8 more tests in the family, Holm's multiplier (9) does not."""
    weak = {"output_tokens_per_second": [2.0, 1.5, -0.5, 1.8, 1.2, 1.6, 1.4]}
    alone = _decide(a=_comparison("a", weak, [0.2, 1.9]))["a"].metrics[0]
    many = _decide(a=_comparison("a", weak, [0.2, 1.9]), **{
        f"n{i}": _comparison(f"n{i}", {"output_tokens_per_second": [1.0, -1.0, 0.5, -0.4, 0.2],
                                       "makespan_ms": [0.3, -0.2, 0.1, -0.1, 0.2]})
        for i in range(4)})["a"].metrics[0]
    assert alone.verdict == "promote"
    assert many.p_adjusted is not None and many.p_adjusted > (alone.p_adjusted or 0)
    assert many.verdict == "inconclusive"
