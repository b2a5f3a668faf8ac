"""The coverage map of a merged report (`report merge`): which slice verified which layers.

One bar per slice over the package's layers (the slice's range coloured by its status, the rest
grey), then a bar of the layers no slice verified; a table lists each slice's file and counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from markupsafe import Markup

from meshcert.certify.report import CertReport, MergeInfo, SliceCoverage
from meshcert.certify.stages import layer_range
from meshcert.reports import svg

STATUS_TONES = {"passed": "ok", "failed": "bad", "incomplete": "warn"}


@dataclass(frozen=True)
class SliceRow:
    report: str
    status: str
    stage: str
    layers: str
    artifacts: int


@dataclass(frozen=True)
class CoverageView:
    chart: Markup
    rows: list[SliceRow]
    summary: str
    unverified: list[str]


def _span(start: int, end: int) -> str:
    return layer_range(start, end) if end > start else "none"


def _bar(label: str, start: int, end: int, total: int, colour: str, detail: str) -> svg.StackRow:
    grey = svg.TONES["muted"]
    segments = [svg.Segment("not in this slice", float(start), grey),
                svg.Segment(f"layers {_span(start, end)}", float(end - start), colour, detail),
                svg.Segment("not in this slice", float(total - end), grey)]
    return svg.StackRow(label, [s for s in segments if s.value > 0], f"layers {_span(start, end)}",
                        css="stack-row slice-bar")


def _gaps(merge: MergeInfo, total: int) -> svg.StackRow:
    missing = set(merge.unverified_layers)
    segments: list[svg.Segment] = []
    for layer in range(total):
        tone = "bad" if layer in missing else "ok"
        label = "unverified" if layer in missing else "verified"
        if segments and segments[-1].label == label:
            last = segments[-1]
            segments[-1] = svg.Segment(label, last.value + 1, last.colour, last.detail)
        else:
            segments.append(svg.Segment(label, 1.0, svg.TONES[tone], f"from layer {layer}"))
    text = f"{len(missing)} unverified" if missing else "all verified"
    return svg.StackRow("coverage", segments, text, css="stack-row coverage-bar")


def build_coverage_view(report: CertReport) -> CoverageView | None:
    merge = report.merge
    if merge is None:
        return None
    total = report.layer_count or max([s.layer_end for s in merge.slices] + [1])
    bars = [_bar(s.stage or s.report, s.layer_start, s.layer_end, total,
                 svg.TONES[STATUS_TONES[s.status]], f"{s.report}: {s.status}")
            for s in merge.slices]
    legend = [svg.LegendItem(status, svg.TONES[tone]) for status, tone in STATUS_TONES.items()]
    chart = svg.stacked_rows([*bars, _gaps(merge, total)], title="Which slice verified which "
                             "layers", legend=legend, scale_to=float(total))
    return CoverageView(
        chart=chart, rows=[_row(s) for s in merge.slices],
        summary=f"{merge.verified_artifacts} of {merge.declared_artifacts} artifacts verified "
        f"by {len(merge.slices)} slice(s)", unverified=merge.unverified_artifacts)


def _row(s: SliceCoverage) -> SliceRow:
    return SliceRow(report=s.report, status=s.status, stage=s.stage or "",
                    layers=_span(s.layer_start, s.layer_end), artifacts=s.artifacts)
