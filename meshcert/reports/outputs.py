"""Render a report into the requested formats and write the files (atomically)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

from meshcert.core.atomic import write_atomic

if TYPE_CHECKING:
    from typing import TypeAlias

    from meshcert.certify.report import CertReport
    from meshcert.evidence.report import EvidenceReport

    AnyReport: TypeAlias = CertReport | EvidenceReport

# format -> (module, function); a renderer loads only when its format is asked for, so a
# `models certify` without --html never imports jinja2.
RENDERERS: dict[str, tuple[str, str]] = {
    "html": ("meshcert.reports.html", "render_html"),
    "md": ("meshcert.reports.markdown", "render_markdown"),
    "junit": ("meshcert.reports.certification.junit", "render_junit"),
}


def renderer(fmt_name: str) -> Callable[[AnyReport], str]:
    module, function = RENDERERS[fmt_name]
    return cast("Callable[[AnyReport], str]", getattr(importlib.import_module(module), function))


def write_reports(report: AnyReport, *, html: str | os.PathLike[str] | None = None,
                  md: str | os.PathLike[str] | None = None,
                  junit: str | os.PathLike[str] | None = None,
                  sarif: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Render and write each requested format; returns format -> written path.
    SARIF: findings of a certification or inspect report, or an evidence report's gate
    failures, blocking decisions and warnings (meshcert/reports/evidence/sarif.py)."""
    written: dict[str, Path] = {}
    for fmt_name, target in (("html", html), ("md", md), ("junit", junit)):
        if target is not None:
            written[fmt_name] = write_atomic(target, renderer(fmt_name)(report))
    if sarif is not None:
        written["sarif"] = write_atomic(sarif, _sarif(report))
    return written


def _sarif(report: AnyReport) -> str:
    """SARIF of a certification report, or of an evidence report (its module loads only
    then, so a certification's --sarif never imports the evidence models)."""
    from meshcert.certify.report import CertReport

    if isinstance(report, CertReport):
        from meshcert.reports.certification.sarif import render_sarif

        return render_sarif(report)
    from meshcert.evidence.report import EvidenceReport

    if not isinstance(report, EvidenceReport):
        raise TypeError("SARIF output is for certification and evidence reports")
    from meshcert.reports.evidence.sarif import render_evidence_sarif

    return render_evidence_sarif(report)
