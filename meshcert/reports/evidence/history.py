"""The `meshcert evidence history` report: a regression table per setup and, per metric, an
SVG of the series (points, the baseline median line, the band mesh-llm's rule allows)."""

from __future__ import annotations

from markupsafe import Markup, escape

from meshcert.evidence.report import HistoryMetricVerdict, HistoryVerdict
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

_W, _H, _L, _R, _T, _B = 640.0, 220.0, 56.0, 16.0, 28.0, 28.0
TONE = {"pass": "ok", "performance-regression": "bad", "correctness-failure": "bad",
        "insufficient-baseline": "warn"}


def band(v: HistoryMetricVerdict) -> tuple[float, float] | None:
    """The values the rule lets pass: past both the relative limit and the noise floor."""
    if v.baseline_median is None or v.noise_floor is None:
        return None
    m = v.baseline_median
    if v.better == "higher":
        return min(m * (1 - v.limit), m - v.noise_floor), m * 10
    return 0.0, max(m * (1 + v.limit), m + v.noise_floor)


def series_plot(h: HistoryVerdict, v: HistoryMetricVerdict) -> Markup:
    values = [(i, p.values.get(v.metric)) for i, p in enumerate(h.points)]
    found = [(i, y) for i, y in values if y is not None]
    title = f"{v.metric} ({h.cohort_key[:12]})"
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
    x = Scale(0, max(1, len(values) - 1), _L, _W - _R)
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
        tone = TONE.get(h.history_class, "ok") if i == last else "neutral"
        body.append(el("circle", {"cx": x(i), "cy": y(value), "r": 3.5 if i == last else 2.5,
                                  "fill": colour(tone), "class": "point"},
                       el("title", None, f"{h.points[i].source_sha[:10]} "
                          f"{h.points[i].created_utc}: {value:g}")))
    body.append(text(_L, 16, title, weight="600"))
    return svg_root(_W, _H, title, body)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def render_history_html(history: list[HistoryVerdict], title: str = "Performance history"
                        ) -> str:
    rows = []
    plots = []
    for h in history:
        setup = ", ".join(f"{k}={v}" for k, v in h.setup.items())
        for v in h.metrics:
            interval = ("-" if v.change_low is None
                        else f"[{_pct(v.change_low)}, {_pct(v.change_high)}] {v.interval_says}")
            current = "-" if v.current is None else f"{v.current:g}"
            median = "-" if v.baseline_median is None else f"{v.baseline_median:g}"
            rows.append(f"<tr><td><code>{escape(h.cohort_key[:12])}</code><br>"
                        f"<small>{escape(setup)}</small></td><td>{escape(h.history_class)}</td>"
                        f"<td>{escape(v.metric)}</td><td>{current}</td><td>{median}"
                        f"</td><td>{_pct(v.change)}</td><td>{h.baseline_n}</td>"
                        f"<td>{escape(interval)}</td><td>{escape(h.file)}:{h.line}</td></tr>")
            plots.append(str(series_plot(h, v)))
    head = ("<tr><th>setup</th><th>class</th><th>metric</th><th>current</th><th>median</th>"
            "<th>change</th><th>baseline</th><th>interval</th><th>row</th></tr>")
    return ("<!doctype html><html><head><meta charset='utf-8'><title>" + str(escape(title)) +
            "</title></head><body><h1>" + str(escape(title)) + "</h1><table>" + head +
            "".join(rows) + "</table>" + "".join(f"<figure>{p}</figure>" for p in plots) +
            "</body></html>\n")


def render_history_markdown(history: list[HistoryVerdict]) -> str:
    out = ["| setup | class | metric | current | median | change | baseline | interval |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for h in history:
        for v in h.metrics:
            interval = ("-" if v.change_low is None
                        else f"[{_pct(v.change_low)}, {_pct(v.change_high)}] {v.interval_says}")
            out.append(f"| `{h.cohort_key[:12]}` | {h.history_class} | {v.metric} | "
                       f"{'-' if v.current is None else f'{v.current:g}'} | "
                       f"{'-' if v.baseline_median is None else f'{v.baseline_median:g}'} | "
                       f"{_pct(v.change)} | {h.baseline_n} | {interval} |")
    return "\n".join(out) + "\n"
