"""Samples, summaries, the bootstrap speedup interval and Holm's correction."""

from __future__ import annotations

import numpy as np
import pytest

from meshcert.evidence.stats import (
    RowKey,
    collect_samples,
    holm,
    ratio_interval,
    records,
    summarize,
)
from tests.evidence.gate_logs import frame


def _perf(us: float | None, run: str, **kw: object) -> dict[str, object]:
    return {"kind": "perf", "op": "OP", "params": "a=1", "param_dict": {"a": 1},
            "backend": "Metal", "run_id": run, "us_per_run": us, "supported": us is not None,
            **kw}


def _sample(us: float, run: str, i: int) -> dict[str, object]:
    return {**_perf(us, run), "kind": "perf_sample", "sample": i, "format": "ggml-test"}


KEY = RowKey("Metal", "OP", "a=1", "default")


def test_one_sample_per_run_for_perf_rows() -> None:
    s = collect_samples(records(frame([_perf(10.0, "r1"), _perf(12.0, "r2"),
                                       _perf(11.0, "r3")])))[KEY]
    assert sorted(s.values.tolist()) == [10.0, 11.0, 12.0]
    assert s.source == "perf" and s.run_ids == ("r1", "r2", "r3")
    assert [r.line for r in s.refs] == [1, 2, 3]


def test_perf_samples_replace_their_runs_perf_row_never_both() -> None:
    rows = [_sample(10.0, "r1", 1), _sample(10.2, "r1", 2), _sample(9.8, "r1", 3),
            _perf(10.0, "r1"),  # the same run's mean: not a fourth sample
            _perf(11.0, "r2")]  # a run without perf_sample lines: its perf row counts
    s = collect_samples(records(frame(rows)))[KEY]
    assert sorted(s.values.tolist()) == [9.8, 10.0, 10.2, 11.0]
    assert s.source == "mixed"
    assert s.notes == ("run r1: used 3 perf_sample row(s) instead of its 1 perf row(s)",)


def test_other_kinds_backends_and_variants_are_kept_apart() -> None:
    rows = [_perf(10.0, "r1"), _perf(30.0, "r1", backend="CPU"),
            _perf(20.0, "r2", variant="q3-k-mul-mv-id-nsg-4"),
            {**_perf(10.0, "r1"), "kind": "perf_summary"},
            {**_perf(None, "r3"), "supported": False}]
    samples = collect_samples(records(frame(rows)))
    assert samples[KEY].values.tolist() == [10.0]
    assert samples[KEY].unsupported_rows == 1
    assert samples[RowKey("CPU", "OP", "a=1", "default")].values.tolist() == [30.0]
    assert samples[RowKey("Metal", "OP", "a=1", "q3-k-mul-mv-id-nsg-4")].n == 1


def test_summary_median_iqr_min_max() -> None:
    s = summarize([1.0, 2.0, 3.0, 4.0, 100.0])
    assert s is not None
    assert (s.n, s.median, s.q1, s.q3, s.min, s.max) == (5, 3.0, 2.0, 4.0, 1.0, 100.0)
    assert s.iqr == 2.0
    assert summarize([]) is None


def _arr(*values: float) -> np.ndarray:
    return np.asarray(values, dtype=float)


def test_ratio_interval_is_seeded_and_brackets_the_point_estimate() -> None:
    base, cand = _arr(140, 141, 139, 142, 140), _arr(100, 101, 99, 100, 102)
    a = ratio_interval([base], [cand], threshold=1.08, name="x", replicates=4000)
    b = ratio_interval([base], [cand], threshold=1.08, name="x", replicates=4000)
    assert (a.ci_low, a.ci_high, a.p_value) == (b.ci_low, b.ci_high, b.p_value)
    assert a.point == pytest.approx(140 / 100)
    assert a.ci_low <= a.point <= a.ci_high
    assert a.p_value == pytest.approx(1 / 4001)  # every replicate is above 1.08
    other = ratio_interval([base], [cand], threshold=1.08, name="y", replicates=4000)
    assert other.seed != a.seed  # each comparison has its own stream


def test_ratio_interval_for_a_slower_candidate_and_for_summed_rows() -> None:
    slower = ratio_interval([_arr(100, 101, 99)], [_arr(120, 121, 119)], threshold=1.0,
                            name="slow", replicates=2000)
    assert slower.ci_high < 1.0 and slower.p_value == 1.0
    summed = ratio_interval([_arr(10, 10, 10), _arr(40, 40, 40)], [_arr(25, 25, 25)],
                            threshold=1.0, name="sum", replicates=2000)
    assert summed.point == pytest.approx(50 / 25)
    assert summed.ci_low == summed.ci_high == pytest.approx(2.0)


def test_ratio_interval_needs_samples_on_every_row() -> None:
    with pytest.raises(ValueError):
        ratio_interval([_arr()], [_arr(1.0)], threshold=1.0, name="empty")


def test_holm_step_down() -> None:
    out = holm({"a": 0.01, "b": 0.04, "c": 0.03}, alpha=0.025)
    assert {k: round(v.p_adjusted, 6) for k, v in out.items()} == {"a": 0.03, "c": 0.06,
                                                                    "b": 0.06}
    assert [out[k].rank for k in "acb"] == [1, 2, 3]
    assert out["a"].level == pytest.approx(0.025 / 3)
    assert out["b"].level == pytest.approx(0.025)
    assert all(v.m == 3 for v in out.values())
    assert holm({}, alpha=0.025) == {}
