"""The inline SVG helpers: escaping, scales, one element per datum."""

from __future__ import annotations

import math

from meshcert.reports import svg
from tests.reports.dom import parse

HOSTILE = '<script>alert(1)</script>"onload=x'


def test_text_and_attributes_are_escaped() -> None:
    out = svg.el("g", {"data-key": HOSTILE}, svg.el("title", None, HOSTILE), HOSTILE)
    assert "<script>" not in out
    node = parse(str(out)).find("g")
    assert node.attrs["data-key"] == HOSTILE
    assert node.text().count(HOSTILE) == 2


def test_charts_escape_labels_and_have_one_group_per_datum() -> None:
    bars = svg.hbar_chart([svg.Bar(HOSTILE, 3.0), svg.Bar("b", 1.0)], title=HOSTILE)
    stacked = svg.stacked_bar([svg.Segment(HOSTILE, 2.0, "#000"), svg.Segment("x", 1.0, "#fff")],
                              title="t")
    forest = svg.forest_plot([svg.Interval(HOSTILE, 1.2, 1.1, 1.3, 1.02),
                              svg.Interval("none", None, None, None, 1.0)], title="f")
    spread = svg.spread_plot([svg.Spread(HOSTILE, 10.0, 9.0, 11.0, 8.0, 12.0, (9.5, 10.5))],
                             title="s")
    for chart, cls, count in ((bars, "bar", 2), (forest, "forest-row", 2),
                              (spread, "spread-row", 1)):
        assert "<script>" not in chart
        root = parse(str(chart)).find("svg")
        assert len(root.find_all("g", cls=cls)) == count
        assert "xmlns" not in root.attrs and root.attrs["role"] == "img"
    assert len(parse(str(stacked)).find_all("rect", cls="segment")) == 2
    assert "66.7%" in parse(str(stacked)).text()


def test_nice_ticks_cover_the_range() -> None:
    ticks = svg.nice_ticks(0, 1147.21, 5)
    assert ticks[0] == 0 and ticks[-1] <= 1147.21 and len(ticks) >= 4
    assert all(b > a for a, b in zip(ticks, ticks[1:], strict=False))
    assert svg.nice_ticks(1.0, 1.0) == [1.0]


def test_forest_goes_logarithmic_for_wide_ranges() -> None:
    wide = svg.forest_plot([svg.Interval("a", 18.0, 17.5, 18.5, 1.0),
                            svg.Interval("b", 1.1, 1.05, 1.15, 1.0)], title="w")
    labels = [t.text() for t in parse(str(wide)).find_all("text")]
    assert "1" in labels and "10" in labels
    scale = svg.LogScale(0.5, 2.0, 0.0, 100.0)
    assert math.isclose(scale(1.0), 50.0)


def test_scale_clamps() -> None:
    scale = svg.Scale(0.0, 10.0, 100.0, 200.0)
    assert scale(-5) == 100.0 and scale(50) == 200.0 and scale(5) == 150.0
