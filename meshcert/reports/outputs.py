"""Write a report in the requested formats (atomically); the renderers come from the report-format
registry (meshcert/reports/registry.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from meshcert.core.atomic import write_atomic
from meshcert.reports.registry import REPORT_FORMATS, Report, render

if TYPE_CHECKING:
    from meshcert.evidence.report import EvidenceReport

DECISIONS_JSON = "decisions.json"
SUMMARY_MD = "summary.md"
# what the commands call the pair when they list the files they wrote
DECISIONS_LABEL = "evidence decisions (JSON)"
SUMMARY_LABEL = "evidence summary (Markdown)"


def write_reports(report: Report, **targets: str | os.PathLike[str] | None) -> dict[str, Path]:
    """Render and write each format given a path (html=..., md=..., any format of the
    registry; a command passes its ReportOutputs as `**outputs`); returns format -> written
    path, in the registry's order.
    SARIF: findings of a certification or inspect report, or an evidence report's gate
    failures, blocking decisions and warnings (meshcert/reports/evidence/sarif.py)."""
    unknown = sorted(set(targets) - set(REPORT_FORMATS))
    if unknown:
        raise ValueError(f"unknown report format(s): {', '.join(unknown)}")
    written: dict[str, Path] = {}
    for fmt in REPORT_FORMATS:
        target = targets.get(fmt)
        if target is not None:
            written[fmt] = write_atomic(target, render(fmt, report))
    return written


def write_decisions(report: EvidenceReport, out_dir: str | os.PathLike[str], *,
                    md: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """The evidence commands' pair under out_dir: decisions.json (the report) and summary.md;
    a --md given as that summary.md replaces it (the caller writes the --md). Returns
    label -> written path."""
    out = Path(out_dir)
    summary = out / SUMMARY_MD
    replaced = md is not None and Path(md).resolve() == summary.resolve()
    written = write_reports(report, json=out / DECISIONS_JSON,
                            summary=None if replaced else summary)
    labels = {"json": DECISIONS_LABEL, "summary": SUMMARY_LABEL}
    return {labels[fmt]: path for fmt, path in written.items()}
