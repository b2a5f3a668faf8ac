"""Render a report into the requested formats and write the files (atomically)."""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from certify.report import CertReport
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


def write_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write via a temp file in the same folder + rename; parent folders are created.
    (The temp file is created with `open(..., "x")`, so the result gets the usual umask mode.)"""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target


def write_reports(report: AnyReport, *, html: str | os.PathLike[str] | None = None,
                  md: str | os.PathLike[str] | None = None,
                  junit: str | os.PathLike[str] | None = None) -> dict[str, Path]:
    """Render and write each requested format; returns format -> written path."""
    written: dict[str, Path] = {}
    for fmt_name, target in (("html", html), ("md", md), ("junit", junit)):
        if target is not None:
            written[fmt_name] = write_atomic(target, RENDERERS[fmt_name](report))
    return written
