"""The `meshcert evidence history` report: a regression table per setup and, per metric, an
SVG of the series (points, the baseline median line, the band mesh-llm's rule allows).

The page is laid out by `history.html.j2` on the same base template and stylesheet as every
other report (banner with the overall status, sections, tables). Each plot has both axes
labelled; the latest point is coloured by its own metric's class (`metric_class`), and every
point carries whether it is drawn inside or outside the band (`data-band`), with a ring when
outside, so colour and drawing never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from meshcert.evidence.headline import history_setup
from meshcert.evidence.history import history_status, metric_class
from meshcert.evidence.report import HistoryMetricVerdict, HistoryVerdict
from meshcert.reports.common import Stat
from meshcert.reports.svg import (
    GRID,
    INK,
    SUBTLE,
    Scale,
    colour,
    el,
    nice_ticks,
    svg_root,
    text,
    tick_label,
)

_W, _H, _L, _R, _T, _B = 640.0, 240.0, 64.0, 16.0, 28.0, 44.0
TONE = {"pass": "ok", "performance-regression": "bad", "correctness-failure": "bad",
        "insufficient-baseline": "warn"}
BADGE = {"pass": "passed", "performance-regression": "failed", "correctness-failure": "failed",
         "insufficient-baseline": "incomplete"}
HEADLINES = {"passed": "Every setup passes", "failed": "A setup regressed or failed",
             "incomplete": "Not every setup has a baseline"}
X_LABEL = "run (oldest \u2192 latest)"


def band(v: HistoryMetricVerdict) -> tuple[float, float] | None:
    """The values the rule lets pass: past both the relative limit and the noise floor."""
    if v.baseline_median is None or v.noise_floor is None:
        return None
    m = v.baseline_median
    if v.better == "higher":
        return min(m * (1 - v.limit), m - v.noise_floor), m * 10
    return 0.0, max(m * (1 + v.limit), m + v.noise_floor)


def metric_unit(metric: str) -> str:
    """The unit mesh-llm's field name carries (bench-formats spec section 0)."""
    if metric.endswith(("_tok_s", "tokens_per_second")):
        return "tok/s"
    if metric.endswith("_ms") or "_ms_" in metric:
        return "ms"
    if metric.endswith("_percent"):
        return "%"
    return ""


def inside(value: float, lim: tuple[float, float] | None) -> bool | None:
    return None if lim is None else lim[0] <= value <= lim[1]


def series_plot(h: HistoryVerdict, v: HistoryMetricVerdict) -> Markup:
    values = [(i, p.values.get(v.metric)) for i, p in enumerate(h.points)]
    found = [(i, y) for i, y in values if y is not None]
    own = metric_class(h, v)
    title = f"{v.metric} ({h.cohort_key[:12]}): {own}"
    if not found:
        return svg_root(_W, 40, title, [text(8, 24, f"{v.metric}: no values", fill=SUBTLE)])
    ys = [y for _, y in found] + ([v.baseline_median] if v.baseline_median else [])
    low, high = min(ys), max(ys)
    lim = band(v)
    if lim is not None:
        edge = lim[0] if v.better == "higher" else lim[1]
        low, high = min(low, edge), max(high, edge)
    pad = (high - low) * 0.08 or abs(high) * 0.05 or 1.0
    ticks = nice_ticks(low - pad, high + pad)
    y = Scale(ticks[0], ticks[-1], _H - _B, _T)
    x = Scale(0, max(1, len(values) - 1), _L + 8, _W - _R - 8)
    body: list[Markup] = []
    for t in ticks:
        body.append(el("line", {"x1": _L, "x2": _W - _R, "y1": y(t), "y2": y(t),
                                "stroke": GRID}))
        body.append(text(_L - 6, y(t) + 4, tick_label(t), anchor="end", fill=SUBTLE))
    if lim is not None:
        top, bottom = y(min(lim[1], ticks[-1])), y(max(lim[0], ticks[0]))
        body.append(el("rect", {"x": _L, "y": top, "width": _W - _R - _L,
                                "height": max(0.0, bottom - top), "fill": colour("ok"),
                                "fill-opacity": 0.12, "class": "band"}))
    if v.baseline_median is not None:
        body.append(el("line", {"x1": _L, "x2": _W - _R, "y1": y(v.baseline_median),
                                "y2": y(v.baseline_median), "stroke": INK,
                                "stroke-dasharray": "4 3", "class": "median"}))
    last = len(values) - 1
    for i, value in found:
        point = h.points[i]
        where = inside(value, lim)
        tone = TONE[own] if i == last else "neutral" if point.complete else "none"
        ring = colour("bad") if where is False else (SUBTLE if tone == "none" else "none")
        state = "outside" if where is False else "inside" if where else "no-band"
        excluded = "" if point.complete else " (incomplete: not in the baseline)"
        body.append(el("circle", {"cx": x(i), "cy": y(value), "r": 4.0 if i == last else 2.8,
                                  "fill": colour(tone) if tone != "none" else "white",
                                  "stroke": ring, "stroke-width": 1.5,
                                  "class": "point latest" if i == last else "point",
                                  "data-band": state,
                                  "data-class": own if i == last else None},
                       el("title", None, f"{point.source_sha[:10]} {point.created_utc}: "
                          f"{value:g} ({state}){excluded}")))
    # axes: x below the plot, y rotated along the left edge
    body.append(el("line", {"x1": _L, "x2": _W - _R, "y1": _H - _B, "y2": _H - _B,
                            "stroke": SUBTLE}))
    if found:
        first, latest = h.points[0], h.points[last]
        body.append(text(x(0), _H - _B + 14, first.created_utc[:10] or "first", anchor="start",
                         size=11, fill=SUBTLE))
        body.append(text(x(last), _H - _B + 14, latest.created_utc[:10] or "latest",
                         anchor="end", size=11, fill=SUBTLE))
    body.append(text((_L + _W - _R) / 2, _H - 8, X_LABEL, anchor="middle", size=11,
                     fill=SUBTLE, css="axis-label x-label"))
    unit = metric_unit(v.metric)
    y_label = f"{v.metric} ({unit})" if unit else v.metric
    cy = (_T + _H - _B) / 2
    body.append(el("text", {"x": 14.0, "y": cy, "text-anchor": "middle", "font-size": 11,
                            "fill": SUBTLE, "class": "axis-label y-label",
                            "transform": f"rotate(-90 14 {cy:.1f})"}, y_label))
    body.append(text(_L, 16, title, weight="600"))
    return svg_root(_W, _H, title, body)


def change_text(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def interval_text(v: HistoryMetricVerdict) -> str:
    return ("-" if v.change_low is None
            else f"[{change_text(v.change_low)}, {change_text(v.change_high)}] {v.interval_says}")


@dataclass(frozen=True)
class MetricRow:
    setup: str
    cohort: str
    history_class: str
    metric_class: str
    badge: str
    metric: str
    current: str
    median: str
    change: str
    baseline: int
    interval: str
    row: str


@dataclass(frozen=True)
class SetupFigures:
    cohort: str
    setup: str
    history_class: str
    badge: str
    plots: list[Markup]


@dataclass(frozen=True)
class HistoryView:
    title: str
    status: str
    headline: str
    subject: str
    stats: list[Stat]
    rows: list[MetricRow]
    setups: list[SetupFigures]
    problems: list[str]
    sources: list[str]


def _setup_text(h: HistoryVerdict) -> str:
    return history_setup(h)


def build_history_view(history: list[HistoryVerdict], *, title: str = "Performance history",
                       sources: list[str] | None = None, problems: list[str] | None = None,
                       rows_read: int | None = None) -> HistoryView:
    status = history_status(history)
    counts: dict[str, int] = {}
    for h in history:
        counts[h.history_class] = counts.get(h.history_class, 0) + 1
    stats = [Stat("setups", str(len(history)))]
    if rows_read is not None:
        stats.append(Stat("rows read", str(rows_read)))
    stats += [Stat(c, str(n), TONE.get(c, "")) for c, n in counts.items()]
    rows = [MetricRow(setup=_setup_text(h), cohort=h.cohort_key[:12],
                      history_class=h.history_class, metric_class=metric_class(h, v),
                      badge=BADGE[metric_class(h, v)], metric=v.metric,
                      current="-" if v.current is None else f"{v.current:g}",
                      median="-" if v.baseline_median is None else f"{v.baseline_median:g}",
                      change=change_text(v.change), baseline=h.baseline_n,
                      interval=interval_text(v),
                      row=f"{h.file}:{h.line}")
            for h in history for v in h.metrics]
    setups = [SetupFigures(cohort=h.cohort_key[:12], setup=_setup_text(h),
                           history_class=h.history_class, badge=BADGE[h.history_class],
                           plots=[series_plot(h, v) for v in h.metrics]) for h in history]
    summary = ", ".join(f"{n} {c}" for c, n in counts.items()) or "no setup"
    return HistoryView(title=f"{status.upper()}: {title}", status=status,
                       headline=f"{HEADLINES[status]}: {summary}", subject=title, stats=stats,
                       rows=rows, setups=setups, problems=list(problems or []),
                       sources=list(sources or []))
