"""Samples, summaries, the speedup interval and Holm's correction (numpy only).

Samples: rows with the same (backend, op, params, variant) are samples of one measurement.
A "perf" row (console / SQL) is one sample per run; a run that also printed the fork's
`ggml_test: perf_sample` lines contributes those per-sample averages instead of its perf row
(the perf row is their mean over the same iterations: counting both would double count the run).

Method (the report states it): the speedup of a comparison is
`sum of baseline medians / sum of candidate medians` (a side may be several rows, e.g. compact
gather + flash). Its 95% interval is a seeded percentile bootstrap: each row's samples are
resampled with replacement independently, `replicates` times, and the ratio of the resampled
medians (summed per side) is taken; the interval is the 2.5% and 97.5% quantiles. The one-sided
p-value of "speedup <= threshold" is `(1 + #{replicate ratio <= threshold}) / (replicates + 1)`.
The seed of each comparison is derived from the report seed and the comparison's name, so a
result does not depend on which other comparisons ran.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from meshcert.evidence.defaults import DEFAULT_REPLICATES, DEFAULT_SEED

FloatArray = npt.NDArray[np.float64]
SampleSource = Literal["perf", "perf_sample", "mixed", "none"]

CONFIDENCE = 0.95
PERF_KINDS = ("perf", "perf_sample")


def clean(value: Any) -> Any:
    """pandas hands back NaN / NA / numpy scalars; the rules want None and plain Python."""
    if value is None:
        return None
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
        return None if isinstance(value, float) and math.isnan(value) else value
    try:
        import pandas as pd

        if value is pd.NA or value is pd.NaT:
            return None
    except ImportError:  # pragma: no cover - pandas is a dependency
        pass
    return value


def records(table: Any) -> list[dict[str, Any]]:
    """The ingested DataFrame as a list of plain dicts (NaN -> None), in table order."""
    if table is None or len(table) == 0:
        return []
    out = []
    for rec in table.to_dict("records"):
        out.append({k: clean(v) for k, v in rec.items()})
    return out


@dataclass(frozen=True, order=True)
class RowKey:
    backend: str | None
    op: str
    params: str
    variant: str


@dataclass(frozen=True)
class SourceLine:
    file: str
    line: int | None


@dataclass
class SampleSet:
    """The samples of one (backend, op, params, variant)."""

    key: RowKey
    param_dict: Mapping[str, Any]
    values: FloatArray
    source: SampleSource
    run_ids: tuple[str, ...]
    refs: tuple[SourceLine, ...]
    notes: tuple[str, ...] = ()
    order: int = 0  # position of its first row in the table
    unsupported_rows: int = 0

    @property
    def n(self) -> int:
        return int(self.values.size)


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    q1: float
    q3: float
    min: float
    max: float
    mean: float

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1


def summarize(values: Sequence[float] | FloatArray) -> Summary | None:
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return None
    q1, med, q3 = np.percentile(arr, [25, 50, 75])
    return Summary(int(arr.size), float(med), float(q1), float(q3), float(arr.min()),
                   float(arr.max()), float(arr.mean()))


def _key(rec: Mapping[str, Any]) -> RowKey:
    return RowKey(rec.get("backend"), str(rec.get("op")), str(rec.get("params") or ""),
                  str(rec.get("variant") or "default"))


def collect_samples(rows: Iterable[Mapping[str, Any]]) -> dict[RowKey, SampleSet]:
    """Group perf / perf_sample rows into sample sets (see the module docstring)."""
    groups: dict[RowKey, dict[str, dict[str, list[Mapping[str, Any]]]]] = {}
    order: dict[RowKey, int] = {}
    params: dict[RowKey, Mapping[str, Any]] = {}
    unsupported: dict[RowKey, int] = {}
    for i, rec in enumerate(rows):
        kind = rec.get("kind")
        if kind not in PERF_KINDS:
            continue
        key = _key(rec)
        order.setdefault(key, i)
        params.setdefault(key, rec.get("param_dict") or {})
        if rec.get("us_per_run") is None:
            if rec.get("supported") is False:
                unsupported[key] = unsupported.get(key, 0) + 1
            groups.setdefault(key, {})
            continue
        run = str(rec.get("run_id") or rec.get("source_file") or "")
        by_kind = groups.setdefault(key, {}).setdefault(run, {"perf": [], "perf_sample": []})
        by_kind[str(kind)].append(rec)
    out: dict[RowKey, SampleSet] = {}
    for key, runs in groups.items():
        values: list[float] = []
        used: set[str] = set()
        refs: list[SourceLine] = []
        notes: list[str] = []
        for run, by_kind in runs.items():
            chosen = by_kind["perf_sample"] or by_kind["perf"]
            kind = "perf_sample" if by_kind["perf_sample"] else "perf"
            if by_kind["perf_sample"] and by_kind["perf"]:
                notes.append(f"run {run}: used {len(by_kind['perf_sample'])} perf_sample "
                             f"row(s) instead of its {len(by_kind['perf'])} perf row(s)")
            used.add(kind)
            for rec in chosen:
                values.append(float(rec["us_per_run"]))
                line = rec.get("source_line")
                refs.append(SourceLine(str(rec.get("source_file") or ""),
                                       int(line) if line is not None else None))
        source: SampleSource = ("none" if not used else "mixed" if len(used) > 1
                                else "perf_sample" if "perf_sample" in used else "perf")
        out[key] = SampleSet(key, params[key], np.asarray(values, dtype=float), source,
                             tuple(r for r in runs if runs[r]["perf"] or runs[r]["perf_sample"]),
                             tuple(refs), tuple(notes), order[key], unsupported.get(key, 0))
    return out


# --------------------------------------------------------------------------------------------
# The speedup interval
# --------------------------------------------------------------------------------------------


@dataclass
class RatioEstimate:
    """speedup = baseline / candidate (sums of medians), with its bootstrap distribution."""

    point: float
    ci_low: float
    ci_high: float
    p_value: float  # one-sided: P(speedup <= threshold)
    threshold: float
    replicates: int
    seed: int
    distribution: FloatArray = field(repr=False)

    def lower_bound(self, alpha: float) -> float:
        """One-sided lower bound at level alpha (e.g. a Holm-adjusted level)."""
        return float(np.quantile(self.distribution, alpha))


def comparison_seed(seed: int, name: str) -> int:
    return (seed * 1_000_003 + zlib.crc32(name.encode("utf-8"))) % (2**63)


def _bootstrap_medians(values: FloatArray, rng: np.random.Generator,
                       replicates: int) -> FloatArray:
    n = values.size
    out = np.empty(replicates, dtype=float)
    chunk = max(1, min(replicates, 4_000_000 // max(n, 1)))
    for start in range(0, replicates, chunk):
        size = min(chunk, replicates - start)
        idx = rng.integers(0, n, size=(size, n))
        out[start:start + size] = np.median(values[idx], axis=1)
    return out


def ratio_interval(baseline: Sequence[FloatArray], candidate: Sequence[FloatArray], *,
                   threshold: float, name: str, seed: int = DEFAULT_SEED,
                   replicates: int = DEFAULT_REPLICATES) -> RatioEstimate:
    """Bootstrap the speedup of `candidate` over `baseline`; every array must be non-empty."""
    if not baseline or not candidate or any(a.size == 0 for a in (*baseline, *candidate)):
        raise ValueError("every row of a comparison needs at least one sample")
    used_seed = comparison_seed(seed, name)
    rng = np.random.default_rng(used_seed)
    base = np.sum([_bootstrap_medians(a, rng, replicates) for a in baseline], axis=0)
    cand = np.sum([_bootstrap_medians(a, rng, replicates) for a in candidate], axis=0)
    ratio = base / cand
    point = float(sum(np.median(a) for a in baseline) / sum(np.median(a) for a in candidate))
    tail = (1 - CONFIDENCE) / 2
    low, high = np.quantile(ratio, [tail, 1 - tail])
    p = (1 + int(np.count_nonzero(ratio <= threshold))) / (replicates + 1)
    return RatioEstimate(point, float(low), float(high), p, threshold, replicates, used_seed,
                         ratio)


# --------------------------------------------------------------------------------------------
# Holm
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HolmResult:
    p_adjusted: float
    rank: int  # 1 = smallest p
    m: int
    level: float  # the per-step one-sided level alpha / (m - rank + 1)


def holm(pvalues: Mapping[str, float], alpha: float) -> dict[str, HolmResult]:
    """Holm's step-down adjustment; ties are ranked by name so the result is deterministic."""
    ordered = sorted(pvalues.items(), key=lambda kv: (kv[1], kv[0]))
    m = len(ordered)
    out: dict[str, HolmResult] = {}
    running = 0.0
    for i, (name, p) in enumerate(ordered, start=1):
        running = max(running, min(1.0, (m - i + 1) * p))
        out[name] = HolmResult(running, i, m, alpha / (m - i + 1))
    return out
