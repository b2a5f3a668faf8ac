"""Performance-history regression classes (bench-formats spec section 8), by mesh-llm's rule.

For each cohort (same `cohort_key`: the same setup) the current row is its latest
(`created_utc`, then line). Its baseline: the complete rows of the cohort before it with another
`source_sha`. Classes: not complete -> `correctness-failure`; fewer than 3 baseline rows ->
`insufficient-baseline`; throughput down more than 5% AND below the median by more than
max(3 x MAD, 1% of the median), or TTFT up more than 10% AND by more than that floor ->
`performance-regression`; else `pass`. The limits are `rules.HISTORY_RULE`.

Also what the interval says: the 95% bootstrap interval of the change (baseline resampled,
`stats.ratio_interval`): `regression` when it lies wholly past the limit, `within-noise` when
it straddles it (a noisy "regression" shows as such), `no-regression` otherwise. The interval
resamples the latest INTERVAL_WINDOW (200) baseline runs; the median and MAD use them all.

`read_history` streams a file (or an open binary handle): memory holds a few numbers per row,
never the file.
"""

from __future__ import annotations

import math
import os
import tempfile
from array import array
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import IO, Any, Literal

import numpy as np

from meshcert.evidence.parsers.base import UNKNOWN_LINE, IngestProblem
from meshcert.evidence.parsers.perf_history import TTFT, HistoryPoint, read_points
from meshcert.evidence.report import (
    HistoryClass,
    HistoryMetricVerdict,
    HistoryPointOut,
    HistoryVerdict,
    IntervalSays,
)
from meshcert.evidence.rules import HISTORY_RULE, HistoryMetricRule, HistoryRule
from meshcert.evidence.stats import ratio_interval

PLOT_POINTS = 200
INTERVAL_WINDOW = 200    # the interval resamples the latest 200 baseline runs (bounded cost)
_REPLICATES = 2000


_LAST_EPOCH: list[tuple[str, float]] = [("", math.nan)]


def epoch(created: str) -> float:
    """created_utc as seconds (NaN when it is no ISO time: such rows order by line). The rows
    of one nightly run share their time: the last one is remembered."""
    last = _LAST_EPOCH[0]
    if created == last[0]:
        return last[1]
    try:
        value = datetime.fromisoformat(created).timestamp()
    except ValueError:
        value = math.nan
    _LAST_EPOCH[0] = (created, value)
    return value


SPILL_ROWS = 8192       # a cohort's rows in memory before they go to the spill file


@dataclass
class Series:
    """One cohort's rows, compact: parallel arrays of numbers (41 bytes a row); the text of
    the latest PLOT_POINTS rows only. Past SPILL_ROWS the arrays go to the history's spill file
    (a temporary file) in blocks, so reading holds a bounded number of rows whatever the file
    size; `columns` reads one cohort's rows back when it is classified."""

    cohort_key: str
    setup: dict[str, str]
    file: str
    lines: array[int] = field(default_factory=lambda: array("q"))
    shas: array[int] = field(default_factory=lambda: array("q"))
    created: array[float] = field(default_factory=lambda: array("d"))
    complete: array[int] = field(default_factory=lambda: array("b"))
    values: dict[str, array[float]] = field(default_factory=dict)
    recent: deque[tuple[int, str, str]] = field(
        default_factory=lambda: deque(maxlen=2 * PLOT_POINTS))
    blocks: list[tuple[int, int]] = field(default_factory=list)    # (offset, rows) spilled
    spilled: int = 0

    def add(self, point: HistoryPoint, metrics: Iterable[str]) -> None:
        line, _, sha, created, complete, throughput, ttft = point
        self.lines.append(line)
        # source_sha as a number (rows keep numbers, not strings): compared only within one
        # process, so the string hash serves
        self.shas.append(hash(sha))
        self.created.append(epoch(created))
        self.complete.append(complete)
        self.recent.append((line, sha, created))
        values = self.values
        for name in metrics:
            value = ttft if name == TTFT else throughput
            column = values.get(name)
            if column is None:
                column = values[name] = array("d")
            column.append(math.nan if value is None else value)

    @property
    def rows(self) -> int:
        return self.spilled + len(self.lines)

    def _arrays(self) -> list[array[Any]]:
        return [self.lines, self.shas, self.created, self.complete,
                *(self.values[name] for name in sorted(self.values))]

    def spill(self, handle: IO[bytes]) -> None:
        """Append the rows in memory to the spill file as one block; keep none of them."""
        n = len(self.lines)
        if n == 0:
            return
        handle.seek(0, os.SEEK_END)
        self.blocks.append((handle.tell(), n))
        for column in self._arrays():
            column.tofile(handle)
            del column[:]
        self.spilled += n

    def columns(self, handle: IO[bytes] | None) -> dict[str, np.ndarray]:
        """Every row of the cohort (spilled blocks, then those in memory) as numpy columns:
        `lines`, `shas`, `created`, `complete` and one per metric."""
        names = ["lines", "shas", "created", "complete", *sorted(self.values)]
        kinds = [np.int64, np.int64, np.float64, np.int8] + [np.float64] * len(self.values)
        parts: list[list[np.ndarray]] = [[] for _ in names]
        for offset, n in self.blocks:
            assert handle is not None       # blocks exist only with a spill file
            handle.seek(offset)
            for part, kind in zip(parts, kinds, strict=True):
                part.append(np.fromfile(handle, dtype=kind, count=n))
        for part, column, kind in zip(parts, self._arrays(), kinds, strict=True):
            part.append(np.frombuffer(column, dtype=kind) if len(column) else
                        np.empty(0, dtype=kind))
        return {name: np.concatenate(part) for name, part in zip(names, parts, strict=True)}


@dataclass
class History:
    series: dict[str, Series] = field(default_factory=dict)
    problems: list[IngestProblem] = field(default_factory=list)
    rows: int = 0
    spill: IO[bytes] | None = None      # a temporary file, made when a cohort first spills

    def spill_file(self) -> IO[bytes]:
        if self.spill is None:
            self.spill = tempfile.TemporaryFile(prefix="meshcert-history-")  # noqa: SIM115 (lives with the History; deleted on close)
        return self.spill


def _setup(cohort: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in cohort.items():
        if isinstance(value, dict):
            for sub, inner in value.items():
                out[f"{key}.{sub}"] = str(inner)
        else:
            out[key] = str(value)
    return out


def read_history(source: str | os.PathLike[str] | IO[bytes], name: str | None = None,
                 rule: HistoryRule = HISTORY_RULE, into: History | None = None) -> History:
    """Stream a history JSONL (path or binary handle) into per-cohort series."""
    history = into or History()
    if isinstance(source, str | os.PathLike):
        label = name or os.fspath(source)
        try:
            with open(source, "rb") as handle:
                return read_history(handle, label, rule, history)
        except OSError as exc:
            history.problems.append(IngestProblem(label, None, "", f"cannot read: "
                                                  f"{exc.strerror or exc}", "unreadable"))
            return history
    label = name or str(getattr(source, "name", "<history>"))
    metrics = [m.metric for m in rule.metrics]
    rows, problems = history.rows, len(history.problems)
    for item in read_points(source, label):
        if isinstance(item, IngestProblem):
            history.problems.append(item)
            continue
        point, doc = item
        series = history.series.get(point.cohort_key)
        if series is None:
            series = history.series[point.cohort_key] = Series(point.cohort_key,
                                                               _setup(doc["cohort"]), label)
        series.add(point, metrics)
        if len(series.lines) >= SPILL_ROWS:
            series.spill(history.spill_file())
        history.rows += 1
    if history.rows == rows and len(history.problems) == problems:  # an empty (or blank) file
        history.problems.append(IngestProblem(label, None, "", "no history row: the file is "
                                              "empty or blank", UNKNOWN_LINE))
    return history


def _mad(values: np.ndarray, median: float) -> float:
    return float(np.median(np.abs(values - median)))


def _metric_verdict(rule: HistoryMetricRule, current: float, base: np.ndarray,
                    name: str) -> HistoryMetricVerdict:
    out = HistoryMetricVerdict(metric=rule.metric, better=rule.better, current=current,
                               limit=rule.limit, change=None, noise_floor=None,
                               change_low=None)
    base = base[~np.isnan(base)]
    if base.size == 0 or np.isnan(current):
        return out
    with np.errstate(all="ignore"):
        m = float(np.median(base))
        mad = _mad(base, m)
    floor = max(rule.mad_factor * mad, rule.floor * m)
    change = current / m - 1 if m else 0.0
    if rule.better == "higher":
        regressed = change < -rule.limit and m - current > floor
    else:
        regressed = change > rule.limit and current - m > floor
    out.baseline_median, out.baseline_mad, out.noise_floor = m, mad, floor
    out.change, out.regressed = change, bool(regressed)
    window = base[-INTERVAL_WINDOW:]
    if base.size >= 2 and current > 0 and np.all(window > 0) and np.all(np.isfinite(window)):
        with np.errstate(all="ignore"):
            est = ratio_interval([window], [np.array([current])], threshold=1.0,
                                 name=f"history/{name}/{rule.metric}", replicates=_REPLICATES)
        if not (est.ci_low > 0 and math.isfinite(est.ci_high)):
            return out
        low, high = 1 / est.ci_high - 1, 1 / est.ci_low - 1      # change = current / m - 1
        out.change_low, out.change_high = low, high
        says: IntervalSays
        if rule.better == "higher":
            says = ("regression" if high < -rule.limit else "within-noise" if low < -rule.limit
                    else "no-regression")
        else:
            says = ("regression" if low > rule.limit else "within-noise" if high > rule.limit
                    else "no-regression")
        out.interval_says = says
    return out


def classify(series: Series, history: History, rule: HistoryRule = HISTORY_RULE
             ) -> HistoryVerdict:
    cols = series.columns(history.spill)
    lines, shas, complete = cols["lines"], cols["shas"], cols["complete"]
    n = len(lines)
    created = cols["created"]
    when = np.where(np.isnan(created), -np.inf, created)
    order = np.lexsort((lines, when))
    cur = int(order[-1])
    prior = order[:-1]
    earlier = prior[(complete[prior] != 0) & (shas[prior] != shas[cur])]
    metrics: list[HistoryMetricVerdict] = []
    for m in rule.metrics:
        values = cols[m.metric] if m.metric in series.values else np.empty(0)
        current = float(values[cur]) if values.size else float("nan")
        base = values[earlier] if values.size else np.empty(0)
        metrics.append(_metric_verdict(m, current, base, series.cohort_key))
    if not complete[cur]:
        cls = "correctness-failure"
    elif len(earlier) < rule.min_baseline:
        cls = "insufficient-baseline"
    elif any(v.regressed for v in metrics):
        cls = "performance-regression"
    else:
        cls = "pass"
    text = {line: (sha, when_text) for line, sha, when_text in series.recent}
    points = [HistoryPointOut(
        line=int(lines[i]), source_sha=text.get(int(lines[i]), ("?", ""))[0],
        created_utc=text.get(int(lines[i]), ("?", ""))[1], complete=bool(complete[i]),
        values={name: (None if math.isnan(cols[name][i]) else float(cols[name][i]))
                for name in series.values}) for i in map(int, order[-PLOT_POINTS:])]
    sha_text, created_text = text.get(int(lines[cur]), ("?", ""))
    return HistoryVerdict(
        cohort_key=series.cohort_key, setup=series.setup, file=series.file,
        line=int(lines[cur]), source_sha=sha_text,
        created_utc=created_text, history_class=cls,  # type: ignore[arg-type]
        baseline_n=len(earlier), rows=n, metrics=metrics, points=points)


def classify_all(history: History, rule: HistoryRule = HISTORY_RULE) -> list[HistoryVerdict]:
    return [classify(s, history, rule) for s in history.series.values()]


def history_from_records(records: Iterable[Mapping[str, Any]],
                         rule: HistoryRule = HISTORY_RULE) -> History:
    """The series of `history` rows already in an evidence table (`evidence report`)."""
    history = History()
    by_line: dict[tuple[str, int], dict[str, Any]] = {}
    for rec in records:
        if rec.get("kind") != "history":
            continue
        extra = rec.get("extra") or {}
        key = (str(rec.get("source_file")), int(rec.get("source_line") or 0))
        entry = by_line.setdefault(key, {"extra": extra, "params": rec.get("param_dict") or {},
                                         "values": {}})
        entry["values"][rec.get("metric")] = rec.get("value")
    metrics = [m.metric for m in rule.metrics]
    for (file, line), entry in by_line.items():
        extra = entry["extra"]
        cohort = str(extra.get("cohort_key"))
        params = {k: str(v) for k, v in entry["params"].items() if k != "cohort_key"}
        series = history.series.setdefault(cohort, Series(cohort, params, file))
        values = entry["values"]
        series.add(HistoryPoint(line, cohort, str(extra.get("source_sha")),
                                str(extra.get("created_utc") or ""),
                                extra.get("complete") is True,
                                values.get(metrics[0]), values.get(TTFT)), metrics)
        history.rows += 1
    return history


def metric_class(h: HistoryVerdict, v: HistoryMetricVerdict) -> HistoryClass:
    """One metric's own class: a setup's correctness-failure or insufficient-baseline holds for
    every metric of it; otherwise `performance-regression` only for the metric that regressed
    (a setup regressed by its TTFT does not make its throughput a regression)."""
    if h.history_class in ("correctness-failure", "insufficient-baseline"):
        return h.history_class
    return "performance-regression" if v.regressed else "pass"


def history_status(history: Iterable[HistoryVerdict]) -> Literal["passed", "failed",
                                                                  "incomplete"]:
    """failed when a setup regressed or failed; incomplete when one lacks a baseline or there
    is none; else passed."""
    classes = [h.history_class for h in history]
    if any(c in ("correctness-failure", "performance-regression") for c in classes):
        return "failed"
    if not classes or "insufficient-baseline" in classes:
        return "incomplete"
    return "passed"
