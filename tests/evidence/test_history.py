"""History regression classes by mesh-llm's rule (spec section 8). Every series here is derived
by hand from the spec's rule; mesh-llm publishes no history rows to test against."""

from __future__ import annotations

import io

import pytest

from meshcert.evidence.history import classify_all, read_history
from meshcert.evidence.report import HistoryVerdict
from tests.evidence.mesh_history import jsonl, row, series


def _verdicts(rows: list[dict[str, object]]) -> dict[str, HistoryVerdict]:
    history = read_history(io.BytesIO(jsonl(rows).encode()), "h.jsonl")
    assert history.problems == []
    return {v.setup["arm"]: v for v in classify_all(history)}


def _metric(v: HistoryVerdict, name: str) -> tuple[str, bool, str]:
    m = next(m for m in v.metrics if m.metric == name)
    return v.history_class, m.regressed, m.interval_says


def test_a_significant_throughput_regression() -> None:
    # median 400.5, MAD 1.0: 360 is -10.1%, far past max(3.0, 4.005); the interval agrees
    v = _verdicts(series("mesh", [(400, 180), (402, 182), (398, 179), (401, 181),
                                  (360, 185)]))["mesh"]
    assert _metric(v, "output_tokens_per_second") == ("performance-regression", True,
                                                      "regression")
    m = v.metrics[0]
    assert (m.baseline_median, m.baseline_mad, round(m.change or 0, 4)) == (400.5, 1.0, -0.1011)
    assert v.baseline_n == 4 and v.line == 5 and v.source_sha == "mesh0004"


def test_a_noisy_drop_is_no_regression_and_the_interval_says_noise() -> None:
    # -5.3% but MAD 22.5: the floor 3 x MAD = 67.5 is not crossed
    v = _verdicts(series("mesh", [(430, 170), (380, 171), (470, 169), (425, 170),
                                  (405, 172)]))["mesh"]
    assert _metric(v, "output_tokens_per_second") == ("pass", False, "within-noise")


def test_a_ttft_regression() -> None:
    v = _verdicts(series("mesh", [(300, 200), (305, 198), (301, 199), (303, 201),
                                  (302, 240)]))["mesh"]
    assert _metric(v, "ttft_ms_mean") == ("performance-regression", True, "regression")


def test_within_the_band_passes() -> None:
    # -4% is inside mesh-llm's -5% limit however small the MAD
    v = _verdicts(series("mesh", [(400, 180), (400, 180), (401, 180), (399, 180),
                                  (384, 181)]))["mesh"]
    assert _metric(v, "output_tokens_per_second") == ("pass", False, "no-regression")


@pytest.mark.parametrize(("rows", "expected"), [
    (series("mesh", [(400.0, 180.0), (401.0, 180.0), (300.0, 180.0)]), "insufficient-baseline"),
    (series("mesh", [(400.0, 180.0)] * 4 + [(401.0, 180.0)], last_complete=False),
     "correctness-failure"),
])
def test_too_few_runs_and_incomplete_runs(rows: list[dict[str, object]], expected: str) -> None:
    assert _verdicts(rows)["mesh"].history_class == expected


def test_same_sha_rows_and_other_setups_are_no_baseline() -> None:
    rows = [row("same", d, 400.0, 180.0) for d in range(1, 5)] + [row("same", 5, 300.0, 180.0)]
    rows += [row(f"c{d}", d, 900.0, 100.0, concurrency=8) for d in range(1, 5)]
    history = read_history(io.BytesIO(jsonl(rows).encode()), "h.jsonl")
    verdicts = classify_all(history)
    assert [(v.setup["concurrency"], v.history_class, v.baseline_n) for v in verdicts] == [
        ("1", "insufficient-baseline", 0), ("8", "pass", 3)]
