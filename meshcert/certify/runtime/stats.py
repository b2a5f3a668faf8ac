"""Small, dependency-free summary statistics for latency samples."""

from __future__ import annotations

import math
from collections.abc import Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0..100) with linear interpolation between closest ranks (numpy's
    default method); None for no values."""
    if not values:
        return None
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = math.ceil(rank)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def rounded(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def latency_summary(values: Sequence[float], prefix: str) -> dict[str, float | None]:
    """`{prefix}_mean_ms, _p50_ms, _p95_ms, _max_ms` for millisecond samples."""
    return {
        f"{prefix}_mean_ms": rounded(mean(values)),
        f"{prefix}_p50_ms": rounded(percentile(values, 50)),
        f"{prefix}_p95_ms": rounded(percentile(values, 95)),
        f"{prefix}_max_ms": rounded(max(values)) if values else None,
    }
