"""The small-sample statistics of paired A/B round deltas, against hand-derived values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from meshcert.evidence.paired import (
    median_interval,
    min_detectable_effect,
    min_rounds,
    sign_flip_test,
)


def test_k_is_the_fewest_rounds_whose_smallest_holm_p_reaches_alpha() -> None:
    # two-sided, one metric: 2/2^5 = 0.0625 > 0.05, 2/2^6 = 0.03125 <= 0.05 -> 6
    assert min_rounds(0.05) == 6
    # three metrics: 3 * 2/2^6 = 0.094 > 0.05, 3 * 2/2^7 = 0.047 -> 7
    assert min_rounds(0.05, m=3) == 7
    # one-sided: 1/2^5 = 0.031 -> 5; alpha 0.01 two-sided: 2/2^8 = 0.0078 -> 8
    assert min_rounds(0.05, sides=1) == 5 and min_rounds(0.01) == 8
    with pytest.raises(ValueError, match="alpha"):
        min_rounds(0.0)


def test_eight_positive_rounds_have_the_exact_p_two_over_256() -> None:
    """Of the 256 sign vectors only the observed one and its mirror image reach |sum| >= the
    observed sum (every delta is positive): p = 2/256 = 0.0078125 two-sided, 1/256 one-sided."""
    deltas = np.array([9.6, 10.1, 10.4, 9.8, 10.0, 10.2, 9.9, 10.3])
    two = sign_flip_test(deltas)
    assert two.exact and two.sign_vectors == 256 and two.p_value == 2 / 256
    assert two.test == ("exact sign-flip permutation test of the mean, two-sided "
                        "(all 2^8 = 256 sign vectors)")
    assert sign_flip_test(deltas, sides=1).p_value == 1 / 256
    # one-sided towards "lower is better": the data point the other way
    assert sign_flip_test(deltas, sides=1, better=-1).p_value == 1.0


def test_mixed_signs_count_every_sign_vector_as_extreme_as_the_data() -> None:
    """[1, -1, 2]: observed sum 2. The 8 signed sums of 1, 1, 2 are 4, 2, 2, 0 and their
    mirrors -4, -2, -2, 0: six have |sum| >= 2, so p = 6/8."""
    assert sign_flip_test(np.array([1.0, -1.0, 2.0])).p_value == 6 / 8


def test_many_rounds_use_a_seeded_monte_carlo_with_the_plus_one_correction() -> None:
    rng = np.random.default_rng(5)
    deltas = rng.normal(0.3, 1.0, 20)
    exact = sign_flip_test(deltas)
    monte = sign_flip_test(deltas, exact_max=10, resamples=20_000, seed=3)
    assert exact.exact and not monte.exact and monte.sign_vectors == 20_000
    assert monte.p_value == sign_flip_test(deltas, exact_max=10, resamples=20_000,
                                           seed=3).p_value                # seeded
    hits = round(monte.p_value * 20_001) - 1
    assert monte.p_value == (1 + hits) / 20_001
    spread = math.sqrt(exact.p_value * (1 - exact.p_value) / 20_000)
    assert abs(monte.p_value - exact.p_value) < 4 * spread + 1 / 20_001
    many = rng.normal(0.5, 1.0, 10_000)          # 10,000 rounds: never 2^10000
    shifted = sign_flip_test(many, seed=11, resamples=2000)
    assert shifted.p_value == 1 / 2001           # no random sign vector reaches it: the +1
    assert "2,000 random sign vectors, seed 11" in shifted.test


def test_refuses_non_finite_or_empty_deltas() -> None:
    for bad in ([], [1.0, math.nan], [math.inf]):
        with pytest.raises(ValueError, match="finite"):
            sign_flip_test(np.array(bad))


def test_the_median_interval_comes_from_order_statistics_with_its_coverage() -> None:
    """n = 20: P(Bin(20, 1/2) <= 5) = 21700/2^20 = 0.0207, doubled 0.0414 <= 0.05, while
    P(<= 6) doubled is 0.115: j = 6, [x_(6), x_(15)], coverage 1 - 0.0414 = 95.86%."""
    iv = median_interval(np.arange(1.0, 21.0), 0.05)
    assert (iv.low, iv.high, iv.j) == (6.0, 15.0, 6)
    assert iv.coverage == pytest.approx(1 - 2 * 21700 / 2**20)
    # n = 5 (below k): no 95% interval exists; [min, max] says its own coverage 1 - 2/32
    small = median_interval(np.array([5.0, 1.0, 3.0, 2.0, 4.0]), 0.05)
    assert (small.low, small.high, small.coverage) == (1.0, 5.0, 1 - 2 / 32)
    assert "coverage 93.8%" in small.method


def test_the_minimum_detectable_effect_at_n() -> None:
    """(z_{1 - 0.05/2} + z_{0.8}) * sd / sqrt(n) = (1.95996 + 0.84162) * 1 / sqrt(9)."""
    deltas = np.array([-1.0, 1.0, -1.0, 1.0, -1.0, 1.0, -1.0, 1.0, 0.0])   # sd = 1
    mde = min_detectable_effect(deltas, alpha=0.05, m=1, sides=2, k=6)
    assert mde == pytest.approx((1.959964 + 0.841621) / 3, rel=1e-5)
    # Holm over 3 metrics: the first step's level alpha/3 -> z_{1 - 0.05/6} = 2.39398
    assert min_detectable_effect(deltas, alpha=0.05, m=3, sides=2, k=7) == pytest.approx(
        (2.393980 + 0.841621) / 3, rel=1e-5)
    assert min_detectable_effect(deltas[:5], alpha=0.05, m=1, sides=2, k=6) is None


def test_deltas_near_the_float_limit_keep_the_exact_p() -> None:
    """The test depends on the deltas' signs and relative sizes only: 8 positive rounds of
    1e308 have p = 2/256 as 8 rounds of 1 do (their sums overflowed to inf: p was 0)."""
    for scale in (1.0, 1e300, 1e308):
        assert sign_flip_test(np.full(8, scale)).p_value == 2 / 256
        mixed = np.array([1.0, -1.0] * 4) * scale
        assert sign_flip_test(mixed).p_value == 1.0
    mde = min_detectable_effect(np.array([1e308, 0.5e308] * 4), alpha=0.05, m=1, sides=2, k=6)
    assert mde is not None and math.isfinite(mde) and mde > 1e307
