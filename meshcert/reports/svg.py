"""Inline SVG charts written directly (no plotting library), safe to embed in HTML.

Every helper returns `markupsafe.Markup`: all text and attribute values that come from a report
are escaped here, so templates can insert the result as-is. Charts scale with their container
(`viewBox` + `width="100%"`), carry a `<title>` for screen readers, and set their colours as
attributes so they survive being copied out of the page. No `xmlns` attribute: the HTML parser
puts inline `<svg>` in the SVG namespace by itself, and the report stays free of URLs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from markupsafe import Markup, escape

# Tones map meaning to colour; the categorical palette is for parts of a whole.
TONES: dict[str, str] = {
    "ok": "#1a7f37",
    "bad": "#cf222e",
    "warn": "#bf8700",
    "neutral": "#6e7781",
    "accent": "#0969da",
    "muted": "#afb8c1",
}
PALETTE: tuple[str, ...] = (
    "#0969da", "#8250df", "#1a7f37", "#bf8700", "#bc4c00", "#1b7c83", "#cf222e", "#57606a",
)
INK = "#1f2328"
SUBTLE = "#57606a"
GRID = "#d0d7de"

WIDTH = 760
FONT = 12
CHAR_W = 6.6  # average glyph advance at FONT px, for layout only


def colour(tone: str) -> str:
    """A tone name ('ok', 'bad', ...) or a literal colour."""
    return TONES.get(tone, tone)


def _fmt(value: float) -> str:
    """Coordinates with at most 2 decimals (keeps the SVG small and stable)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def el(tag: str, attrs: dict[str, object] | None = None, *children: str) -> Markup:
    """One SVG element. Attribute values are escaped; children must already be Markup
    (plain `str` children are escaped as text)."""
    parts = [tag]
    for key, value in (attrs or {}).items():
        if value is None:
            continue
        if isinstance(value, float):
            value = _fmt(value)
        parts.append(f'{key.rstrip("_").replace("_", "-")}="{escape(str(value))}"')
    inner = Markup("").join(child if isinstance(child, Markup) else escape(child)
                            for child in children)
    return Markup(f"<{' '.join(parts)}>{inner}</{tag}>")


def text(x: float, y: float, content: str, *, anchor: str = "start", size: int = FONT,
         fill: str = INK, weight: str | None = None, css: str | None = None) -> Markup:
    return el("text", {"x": float(x), "y": float(y), "text-anchor": anchor, "font-size": size,
                       "fill": fill, "font-weight": weight, "class": css}, content)


def clip(label: str, max_chars: int) -> str:
    """Shorten a label to fit (the full text goes into the element's <title>)."""
    return label if len(label) <= max_chars else label[: max(1, max_chars - 1)] + "\u2026"


def svg_root(width: float, height: float, title: str, body: Iterable[Markup], *,
             css: str = "chart") -> Markup:
    return el("svg", {"viewBox": f"0 0 {_fmt(width)} {_fmt(height)}", "width": "100%",
                      "role": "img", "aria-label": title, "class": css,
                      "preserveAspectRatio": "xMinYMin meet",
                      "font-family": "system-ui, -apple-system, 'Segoe UI', Roboto, "
                                     "'Liberation Sans', 'DejaVu Sans', sans-serif"},
              el("title", None, title), *body)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low]
    raw = (high - low) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-6:
        ticks.append(round(value, 10))
        value += step
    return ticks


def tick_label(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.0f}" if value == int(value) else f"{value:.1f}"
    return f"{value:.3g}"


@dataclass(frozen=True)
class Scale:
    """Linear map from a data domain to a pixel range."""

    low: float
    high: float
    x0: float
    x1: float

    def __call__(self, value: float) -> float:
        if self.high == self.low:
            return self.x0
        clamped = min(max(value, self.low), self.high)
        return self.x0 + (clamped - self.low) / (self.high - self.low) * (self.x1 - self.x0)


def _axis(scale: Scale | LogScale, ticks: Sequence[float], top: float, bottom: float,
          unit: str = "") -> list[Markup]:
    out: list[Markup] = []
    for tick in ticks:
        x = scale(tick)
        out.append(el("line", {"x1": x, "x2": x, "y1": top, "y2": bottom, "stroke": GRID,
                               "stroke-width": 1}))
        out.append(text(x, bottom + 14, tick_label(tick), anchor="middle", size=11,
                        fill=SUBTLE))
    if unit:
        out.append(text(scale.x1, bottom + 28, unit, anchor="end", size=11, fill=SUBTLE))
    return out


# ---------------------------------------------------------------------------------------------
# Horizontal bars
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    display: str | None = None  # text right of the bar (default: the value)
    tone: str = "accent"
    key: str | None = None  # data-key, for tests and styling


def hbar_chart(bars: Sequence[Bar], *, title: str, unit: str = "") -> Markup:
    """One bar per row, labels left, value text right; the axis starts at zero."""
    label_chars = min(34, max([len(b.label) for b in bars] + [4]))
    left = 12 + label_chars * CHAR_W
    value_w = 110
    row_h = 26
    top = 8
    height = top + row_h * max(1, len(bars)) + 34
    peak = max([b.value for b in bars if math.isfinite(b.value)] + [0.0])
    ticks = nice_ticks(0.0, peak or 1.0, 4)
    scale = Scale(0.0, max(ticks[-1], peak) or 1.0, left, WIDTH - value_w)
    bottom = top + row_h * max(1, len(bars))
    body = _axis(scale, ticks, top, bottom, unit)
    for i, bar in enumerate(bars):
        y = top + i * row_h
        width = max(0.0, scale(bar.value) - scale.x0) if math.isfinite(bar.value) else 0.0
        shown = bar.display if bar.display is not None else tick_label(bar.value)
        body.append(el("g", {"class": "bar", "data-key": bar.key or bar.label},
                       el("title", None, f"{bar.label}: {shown}"),
                       text(left - 8, y + 17, clip(bar.label, label_chars), anchor="end"),
                       el("rect", {"x": scale.x0, "y": float(y + 5), "width": max(width, 1.0),
                                   "height": float(row_h - 10), "rx": 2,
                                   "fill": colour(bar.tone)}),
                       text(scale.x0 + width + 6, y + 17, shown, fill=SUBTLE)))
    return svg_root(WIDTH, height + 6, title, body, css="chart chart-hbar")


# ---------------------------------------------------------------------------------------------
# Stacked bars (parts of a whole)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    label: str
    value: float
    colour: str
    detail: str = ""  # extra text for the tooltip / legend
    key: str | None = None


@dataclass(frozen=True)
class StackRow:
    label: str
    segments: Sequence[Segment]
    total_text: str = ""
    key: str | None = None
    css: str = "stack-row"


@dataclass(frozen=True)
class LegendItem:
    label: str
    colour: str
    detail: str = ""


def _legend(items: Sequence[LegendItem], y: float) -> tuple[list[Markup], float]:
    """Legend items flowing left to right, wrapping; returns the elements and the height."""
    out: list[Markup] = []
    x, row = 12.0, 0
    for item in items:
        caption = f"{item.label} {item.detail}".strip()
        width = 22 + len(caption) * CHAR_W + 18
        if x + width > WIDTH and x > 12:
            x, row = 12.0, row + 1
        yy = y + row * 20
        out.append(el("g", {"class": "legend-item"},
                      el("rect", {"x": x, "y": yy, "width": 12, "height": 12, "rx": 2,
                                  "fill": item.colour}),
                      text(x + 18, yy + 10.5, caption, size=11, fill=INK)))
        x += width
    return out, (row + 1) * 20 if items else 0


def stacked_rows(rows: Sequence[StackRow], *, title: str, legend: Sequence[LegendItem] = (),
                 scale_to: float | None = None) -> Markup:
    """One horizontal stacked bar per row on a common scale (`scale_to` or the largest row)."""
    label_chars = min(26, max([len(r.label) for r in rows] + [4]))
    left = 12 + label_chars * CHAR_W
    total_w = 120
    row_h = 34
    top = 6
    totals = [sum(max(0.0, s.value) for s in r.segments) for r in rows]
    full = scale_to or max(totals + [0.0]) or 1.0
    span = WIDTH - total_w - left
    body: list[Markup] = []
    for i, row in enumerate(rows):
        y = top + i * row_h
        x = left
        segs: list[Markup] = []
        for seg in row.segments:
            width = max(0.0, seg.value) / full * span
            tip = f"{seg.label}{': ' + seg.detail if seg.detail else ''}"
            segs.append(el("rect", {"x": x, "y": float(y + 6), "width": max(width, 0.5),
                                    "height": float(row_h - 12), "fill": seg.colour,
                                    "stroke": "#ffffff", "stroke-width": 1,
                                    "class": "segment", "data-key": seg.key or seg.label},
                           el("title", None, tip)))
            x += width
        body.append(el("g", {"class": row.css, "data-key": row.key or row.label},
                       el("title", None, f"{row.label} {row.total_text}".strip()),
                       text(left - 8, y + row_h / 2 + 4, clip(row.label, label_chars),
                            anchor="end", weight="600"),
                       *segs,
                       text(x + 6, y + row_h / 2 + 4, row.total_text, fill=SUBTLE)))
    height = top + row_h * max(1, len(rows)) + 8
    legend_body, legend_h = _legend(legend, height)
    return svg_root(WIDTH, height + legend_h + 4, title, [*body, *legend_body],
                    css="chart chart-stacked")


def stacked_bar(segments: Sequence[Segment], *, title: str, label: str = "",
                total_text: str = "") -> Markup:
    """A single 100% bar; the legend lists each segment with its share and detail."""
    total = sum(max(0.0, s.value) for s in segments) or 1.0
    legend = [LegendItem(s.label, s.colour, f"{max(0.0, s.value) / total:.1%}"
                         + (f" ({s.detail})" if s.detail else "")) for s in segments]
    return stacked_rows([StackRow(label or "total", segments, total_text, css="stack-row")],
                        title=title, legend=legend)


# ---------------------------------------------------------------------------------------------
# Interval vs threshold (forest plot)
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interval:
    label: str
    estimate: float | None
    low: float | None
    high: float | None
    threshold: float | None
    tone: str = "accent"
    key: str | None = None


def _finite(*values: float | None) -> list[float]:
    return [v for v in values if v is not None and math.isfinite(v)]


LOG_TICKS = (0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 2.0,
             3.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0)


@dataclass(frozen=True)
class LogScale:
    """Log map (ratios are multiplicative: 0.5x and 2x sit equally far from 1)."""

    low: float
    high: float
    x0: float
    x1: float

    def __call__(self, value: float) -> float:
        clamped = min(max(value, self.low), self.high)
        span = math.log(self.high) - math.log(self.low)
        return self.x0 + (math.log(clamped) - math.log(self.low)) / span * (self.x1 - self.x0)


def spaced_ticks(ticks: Sequence[float], scale: Scale | LogScale, min_gap: float = 40.0,
                 keep: float | None = 1.0) -> list[float]:
    """Drop ticks whose labels would collide (closer than `min_gap` px), keeping `keep`."""
    chosen = [keep] if keep is not None and keep in ticks else []
    for tick in ticks:
        if all(abs(scale(tick) - scale(c)) >= min_gap for c in chosen):
            chosen.append(tick)
    return sorted(chosen)


def forest_plot(rows: Sequence[Interval], *, title: str, reference: float | None = 1.0,
                unit: str = "speedup (baseline / candidate)") -> Markup:
    """Each row: the estimate as a dot, its interval as a line, and the row's threshold as a
    dashed red tick; a grey dashed line marks `reference` (1.0 = no change). The axis turns
    logarithmic when the values span more than a factor of 3."""
    values = _finite(reference, *(v for r in rows for v in (r.estimate, r.low, r.high,
                                                             r.threshold)))
    low, high = (min(values), max(values)) if values else (0.5, 2.0)
    label_chars = min(30, max([len(r.label) for r in rows] + [4]))
    left = 12 + label_chars * CHAR_W
    right = WIDTH - 150
    row_h = 30
    top = 8
    bottom = top + row_h * max(1, len(rows))
    scale: Scale | LogScale
    if low > 0 and high / low > 3:
        low, high = low / 1.15, high * 1.15
        scale = LogScale(low, high, left, right)
        ticks = spaced_ticks([t for t in LOG_TICKS if low <= t <= high], scale)
    else:
        pad = max((high - low) * 0.12, 0.02)
        low, high = max(0.0, low - pad), high + pad
        scale = Scale(low, high, left, right)
        ticks = spaced_ticks(nice_ticks(low, high, 5), scale, keep=None)
    body = _axis(scale, ticks, top, bottom, unit)
    if reference is not None:
        x = scale(reference)
        body.append(el("line", {"x1": x, "x2": x, "y1": float(top), "y2": float(bottom),
                                "stroke": SUBTLE, "stroke-width": 1.2,
                                "stroke-dasharray": "4 3", "class": "reference"}))
    for i, row in enumerate(rows):
        y = top + i * row_h + row_h / 2
        parts: list[Markup] = [text(left - 8, y + 4, clip(row.label, label_chars),
                                    anchor="end")]
        if row.threshold is not None and math.isfinite(row.threshold):
            tx = scale(row.threshold)
            parts.append(el("line", {"x1": tx, "x2": tx, "y1": y - 11, "y2": y + 11,
                                     "stroke": TONES["bad"], "stroke-width": 2,
                                     "stroke-dasharray": "3 2", "class": "threshold"},
                            el("title", None, f"threshold {row.threshold:g}")))
        if row.low is not None and row.high is not None:
            parts.append(el("line", {"x1": scale(row.low), "x2": scale(row.high), "y1": y,
                                     "y2": y, "stroke": colour(row.tone), "stroke-width": 3,
                                     "stroke-linecap": "round", "class": "interval"}))
        if row.estimate is not None and math.isfinite(row.estimate):
            parts.append(el("circle", {"cx": scale(row.estimate), "cy": y, "r": 5.5,
                                       "fill": colour(row.tone), "stroke": "#ffffff",
                                       "stroke-width": 1.5, "class": "estimate"}))
            interval = (f" [{row.low:.3f}, {row.high:.3f}]"
                        if row.low is not None and row.high is not None else "")
            caption = f"{row.estimate:.3f}{interval}"
        else:
            caption = "no estimate"
        parts.append(text(right + 10, y + 4, caption, fill=SUBTLE, size=11))
        tip = caption + (f", threshold {row.threshold:g}" if row.threshold is not None else "")
        body.append(el("g", {"class": "forest-row", "data-key": row.key or row.label},
                       el("title", None, f"{row.label}: {tip}"), *parts))
    return svg_root(WIDTH, bottom + 34, title, body, css="chart chart-forest")


# ---------------------------------------------------------------------------------------------
# Time per variant with spread
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Spread:
    """One measured row: median, interquartile box (q1..q3), whiskers (low..high), and
    optionally the individual samples."""

    label: str
    median: float | None
    q1: float | None = None
    q3: float | None = None
    low: float | None = None  # e.g. min
    high: float | None = None  # e.g. max
    samples: Sequence[float] = field(default_factory=tuple)
    tone: str = "accent"
    note: str = ""  # e.g. "n=5"
    key: str | None = None


def spread_plot(rows: Sequence[Spread], *, title: str, unit: str = "us/run") -> Markup:
    """Per row: a whisker low..high, a box q1..q3, each sample as a faint dot and the median
    as a bold tick; the axis starts at zero so lengths compare honestly."""
    values = _finite(*(v for r in rows for v in (r.median, r.q1, r.q3, r.low, r.high)),
                     *(s for r in rows for s in r.samples))
    peak = max(values + [0.0]) or 1.0
    ticks = nice_ticks(0.0, peak, 5)
    label_chars = min(44, max([len(r.label) for r in rows] + [4]))
    left = 12 + label_chars * CHAR_W
    right = WIDTH - 170
    row_h = 26
    top = 8
    bottom = top + row_h * max(1, len(rows))
    scale = Scale(0.0, max(ticks[-1], peak), left, right)
    body = _axis(scale, ticks, top, bottom, unit)
    for i, row in enumerate(rows):
        y = top + i * row_h + row_h / 2
        tone = colour(row.tone)
        parts: list[Markup] = [text(left - 8, y + 4, clip(row.label, label_chars),
                                    anchor="end")]
        if row.low is not None and row.high is not None:
            x0, x1 = scale(row.low), scale(row.high)
            parts.append(el("line", {"x1": x0, "x2": x1, "y1": y, "y2": y, "stroke": tone,
                                     "stroke-width": 1.5, "class": "range"}))
            for xe in (x0, x1):
                parts.append(el("line", {"x1": xe, "x2": xe, "y1": y - 5, "y2": y + 5,
                                         "stroke": tone, "stroke-width": 1.5}))
        if row.q1 is not None and row.q3 is not None:
            b0, b1 = scale(row.q1), scale(row.q3)
            parts.append(el("rect", {"x": b0, "y": y - 7, "width": max(b1 - b0, 1.5),
                                     "height": 14, "rx": 2, "fill": tone, "fill-opacity": 0.25,
                                     "stroke": tone, "stroke-width": 1, "class": "iqr"}))
        for sample in row.samples:
            if math.isfinite(sample):
                parts.append(el("circle", {"cx": scale(sample), "cy": y, "r": 2.2,
                                           "fill": tone, "fill-opacity": 0.55,
                                           "class": "sample"}))
        if row.median is not None and math.isfinite(row.median):
            xm = scale(row.median)
            parts.append(el("rect", {"x": xm - 1.75, "y": y - 9, "width": 3.5, "height": 18,
                                     "fill": tone, "class": "median"}))
            caption = f"{tick_label(row.median)} {unit}".strip()
        else:
            caption = "no data"
        if row.note:
            caption += f"  {row.note}"
        parts.append(text(right + 10, y + 4, caption, fill=SUBTLE, size=11))
        body.append(el("g", {"class": "spread-row", "data-key": row.key or row.label},
                       el("title", None, f"{row.label}: {caption}"), *parts))
    return svg_root(WIDTH, bottom + 34, title, body, css="chart chart-spread")
