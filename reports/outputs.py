"""Render a report into the requested formats and write the files (atomically)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from certify.report import CertReport
from certify.atomic import write_atomic
from reports.html import render_html
from reports.junit import render_junit
from reports.markdown import render_markdown

if TYPE_CHECKING:
    from typing import TypeAlias

    from evidence.report import EvidenceReport

    AnyReport: TypeAlias = CertReport | EvidenceReport

RENDERERS: dict[str, Callable[[AnyReport], str]] = {
    "html": render_html,
    "md": render_markdown,
    "junit": render_junit,
}



def write_reports(report: AnyReport, *, html: str | os.PathLike[str] | None = None,
                  md: str | os.PathLike[str] | None = None,
                  junit: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Render and write each requested format; returns format -> written path."""
    written: dict[str, Path] = {}
    for fmt_name, target in (("html", html), ("md", md), ("junit", junit)):
        if target is not None:
            written[fmt_name] = write_atomic(target, RENDERERS[fmt_name](report))
    return written
