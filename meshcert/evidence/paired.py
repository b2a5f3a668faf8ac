"""The small-sample statistics of paired A/B round deltas (numpy and the standard library only).

An A/B comparison gives one paired delta per round (new vs old, in %). Under the null of no
change each delta is as likely positive as negative (symmetric about 0), so every one of the
2^n sign vectors s in {-1, +1}^n is equally likely; the test is a **sign-flip permutation test
of the mean** over them, statistic T = sum(d_i):

- two-sided p = #{s : |sum s_i |d_i|| >= |T|} / 2^n; one-sided (H1: the better direction b,
  +1 when higher is better, -1 when lower) p = #{s : sum s_i |d_i| >= b T} / 2^n;
- exact for n <= `EXACT_MAX_ROUNDS` (20): the 2^n signed sums are built by doubling, O(2^n)
  time and memory (2^20 = 1,048,576 sums, 8 MB, a few tens of ms); above that a seeded Monte
  Carlo of `resamples` random sign vectors, p = (1 + #{as extreme}) / (resamples + 1), in
  chunks of at most 4M signs (10,000 rounds x 20,000 resamples: about a second);
- ties are counted as extreme (a tolerance of 1e-9 of sum |d_i|): the observed signs and their
  mirror image always count, so the smallest achievable p is 2/2^n two-sided, 1/2^n one-sided.

The minimum number of rounds k: with Holm over m tests the smallest adjusted p is
m * 2/2^n (two-sided; m/2^n one-sided), so k = the smallest n with that <= alpha, i.e.
k = ceil(log2(sides * m / alpha)) (alpha 0.05, two-sided: m = 1 -> 6, m = 3 -> 7). Below k the
test cannot reach alpha whatever the data: such a metric is undecided, never promoted.

The interval of the median effect is the distribution-free **sign-test interval** from order
statistics: [x_(j), x_(n+1-j)] for the largest j with 2 P(Bin(n, 1/2) <= j - 1) <= alpha; its
coverage 1 - 2 P(Bin(n, 1/2) <= j - 1) is stated (>= 1 - alpha). For n < k no such j exists: the
interval is [min, max] and its coverage (1 - 2/2^n) says how little it claims. It is a
description of the effect's size, not a test: the test is the sign-flip p above.

The minimum detectable effect (MDE) at n: the true mean shift (in %) the test detects with 80%
power at the Holm family's most stringent level alpha / m, by the normal approximation:
MDE = (z_{1 - alpha / (sides m)} + z_{0.8}) * sd / sqrt(n), sd the round deltas' standard
deviation (n - 1 in the denominator). None for n < max(2, k): no effect is detectable there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

EXACT_MAX_ROUNDS = 20
DEFAULT_RESAMPLES = 20_000
POWER = 0.8
_CHUNK_SIGNS = 4_000_000

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class SignFlipResult:
    p_value: float
    exact: bool
    sign_vectors: int  # 2^n when exact, else the Monte Carlo resamples
    test: str  # what a reviewer reads: the test, its n and how p was computed


@dataclass(frozen=True)
class MedianInterval:
    low: float
    high: float
    coverage: float  # the interval's own coverage (>= 1 - alpha from n >= k)
    j: int  # the order statistics used: x_(j) .. x_(n+1-j)
    method: str


def min_rounds(alpha: float, m: int = 1, sides: int = 2) -> int:
    """k: the smallest n whose smallest achievable Holm-adjusted p (sides * m / 2^n) is <= alpha."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    n = 1
    while sides * max(m, 1) / 2.0 ** n > alpha:
        n += 1
    return n


def _exact_sums(magnitudes: FloatArray) -> FloatArray:
    sums = np.zeros(1, dtype=float)
    for a in magnitudes:
        sums = np.concatenate((sums + a, sums - a))
    return sums


def _monte_carlo_extreme(magnitudes: FloatArray, target: float, sides: int, resamples: int,
                         seed: int) -> int:
    """How many of `resamples` random sign vectors give a sum at least as extreme."""
    rng = np.random.default_rng(seed)
    n = magnitudes.size
    total = float(magnitudes.sum())
    chunk = max(1, min(resamples, _CHUNK_SIGNS // max(n, 1)))
    hits = 0
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        raw = np.frombuffer(rng.bytes((size * n + 7) // 8), dtype=np.uint8)
        flips = np.unpackbits(raw)[:size * n].reshape(size, n)
        sums = total - 2.0 * (flips @ magnitudes)  # a flipped |d_i| counts -|d_i|
        extreme = np.abs(sums) if sides == 2 else sums
        hits += int(np.count_nonzero(extreme >= target))
    return hits


def _scaled(d: FloatArray) -> FloatArray:
    largest = float(np.max(np.abs(d))) if d.size else 0.0
    return d / largest if largest > 0 else d


def sign_flip_test(deltas: FloatArray, *, sides: int = 2, better: int = 1,
                   resamples: int = DEFAULT_RESAMPLES, seed: int = 0,
                   exact_max: int = EXACT_MAX_ROUNDS) -> SignFlipResult:
    """The sign-flip permutation test of the mean of `deltas` (finite, n >= 1); `better` is +1
    or -1 (only read one-sided)."""
    d = np.asarray(deltas, dtype=float)
    if d.size == 0 or not np.all(np.isfinite(d)):
        raise ValueError("the sign-flip test needs at least one finite delta, and only those")
    n = int(d.size)
    # the test is scale-free: deltas over the largest magnitude keep every sum finite
    # (deltas near the float limit summed to inf, and p to 0)
    d = _scaled(d)
    magnitudes = np.abs(d)
    observed = float(d.sum())
    tolerance = 1e-9 * max(1.0, float(magnitudes.sum()))
    target = (abs(observed) if sides == 2 else better * observed) - tolerance
    kind = "two-sided" if sides == 2 else "one-sided"
    if n <= exact_max:
        sums = _exact_sums(magnitudes)
        extreme = np.abs(sums) if sides == 2 else sums
        count = int(np.count_nonzero(extreme >= target))
        return SignFlipResult(count / sums.size, True, int(sums.size),
                              f"exact sign-flip permutation test of the mean, {kind} "
                              f"(all 2^{n} = {sums.size:,} sign vectors)")
    hits = _monte_carlo_extreme(magnitudes, target, sides, resamples, seed)
    return SignFlipResult((1 + hits) / (resamples + 1), False, resamples,
                          f"Monte Carlo sign-flip permutation test of the mean, {kind} "
                          f"({resamples:,} random sign vectors, seed {seed}, p = (1 + hits) / "
                          f"({resamples:,} + 1))")


def _binomial_half_cdf(n: int) -> list[float]:
    """P(Bin(n, 1/2) <= i) for i = 0..n (log space: fine for n in the tens of thousands)."""
    log_half = n * math.log(0.5)
    out: list[float] = []
    acc = 0.0
    log_comb = 0.0
    for i in range(n + 1):
        if i:
            log_comb += math.log(n - i + 1) - math.log(i)
        acc += math.exp(log_comb + log_half)
        out.append(min(1.0, acc))
    return out


def median_interval(deltas: FloatArray, alpha: float) -> MedianInterval:
    """The sign-test interval of the median (see the module docstring); n >= 1."""
    x = np.sort(np.asarray(deltas, dtype=float))
    n = int(x.size)
    if n == 0:
        raise ValueError("no deltas")
    cdf = _binomial_half_cdf(n)
    j = 1
    while j + 1 <= (n + 1) // 2 and 2 * cdf[j] <= alpha:  # cdf[j] = P(B <= (j + 1) - 1)
        j += 1
    coverage = max(0.0, 1 - 2 * cdf[j - 1])
    return MedianInterval(float(x[j - 1]), float(x[n - j]), coverage, j,
                          f"sign-test interval of the median (order statistics x_({j}) .. "
                          f"x_({n + 1 - j}) of {n}, coverage {coverage:.1%})")


def min_detectable_effect(deltas: FloatArray, *, alpha: float, m: int, sides: int,
                          k: int) -> float | None:
    """The MDE in the deltas' unit (see the module docstring); None below max(2, k) rounds."""
    d = np.asarray(deltas, dtype=float)
    if d.size < max(2, k):
        return None
    z = NormalDist()
    largest = float(np.max(np.abs(d)))
    sd = float(np.std(_scaled(d), ddof=1)) * largest if largest > 0 else 0.0
    return (z.inv_cdf(1 - alpha / (sides * max(m, 1))) + z.inv_cdf(POWER)) * sd \
        / math.sqrt(d.size)
