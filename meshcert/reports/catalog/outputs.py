"""Write a catalog run's files: each package's cert.json and cert.html under --out-dir (as the
packages are certified), and the catalog report as JSON, HTML, Markdown, JUnit and SARIF (each
rendered by the report-format registry, meshcert/reports/registry.py).

--out-dir DIR holds packages/<ns>/<name>/<commit>/cert.{json,html}, catalog.json and
catalog.html; the report's paths are relative to DIR, so the page's links hold wherever DIR is
moved. A row re-used from a --since report gets its files copied from beside that report.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from meshcert.catalog.report import CatalogReport
from meshcert.certify.report import CertReport
from meshcert.core.atomic import write_atomic
from meshcert.reports.registry import REPORT_FORMATS, render

CATALOG_JSON = "catalog.json"
CATALOG_HTML = "catalog.html"
OUT_DIR_FILES = {"json": CATALOG_JSON, "html": CATALOG_HTML}  # written under --out-dir


class PackageReportWriter:
    """`on_certified` for a catalog run: writes each package's cert.json and cert.html."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.out_dir = Path(out_dir)

    def __call__(self, repo: str, commit: str, report: CertReport) -> None:
        from meshcert.catalog.run import cert_paths

        json_rel, html_rel = cert_paths(repo, commit)
        write_atomic(self.out_dir / json_rel, render("json", report))
        write_atomic(self.out_dir / html_rel, render("html", report))


def carry_reused(report: CatalogReport, since: str | os.PathLike[str],
                 out_dir: str | os.PathLike[str] | None) -> None:
    """Rows re-used from `since`: copy their cert files from beside that report into
    `out_dir` (or drop the paths when there is no out dir or the files are gone)."""
    base = Path(since).resolve().parent
    for row in report.packages:
        if row.change != "unchanged":
            continue
        for attr in ("cert_json", "cert_html"):
            rel = getattr(row, attr)
            if rel is None:
                continue
            src = base / rel
            if out_dir is None or not src.is_file():
                setattr(row, attr, None)
                continue
            dst = Path(out_dir) / rel
            if src.resolve() != dst.resolve():
                dst.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(src, dst)


def _prefix(page: Path, out_dir: Path | None) -> str:
    if out_dir is None:
        return ""
    rel = os.path.relpath(out_dir.resolve(), page.resolve().parent)
    return "" if rel == "." else rel.replace(os.sep, "/") + "/"


def write_catalog_reports(report: CatalogReport, *, out_dir: str | os.PathLike[str] | None = None,
                          report_out: str | os.PathLike[str] | None = None,
                          **targets: str | os.PathLike[str] | None) -> list[tuple[str, Path]]:
    """Write the JSON to report_out and each format given a path (html=..., md=..., junit=...,
    sarif=...); with --out-dir also catalog.json and catalog.html there. Returns (format, path)
    for each file written, in REPORT_FORMATS order."""
    unknown = sorted(set(targets) - set(REPORT_FORMATS) | ({"json"} & set(targets)))
    if unknown:
        raise ValueError(f"not a catalog report target: {', '.join(unknown)}")
    base = Path(out_dir) if out_dir is not None else None
    given = {**targets, "json": report_out}
    written: list[tuple[str, Path]] = []
    for fmt in REPORT_FORMATS:
        paths = [Path(p) for p in (given.get(fmt),) if p is not None]
        if base is not None and fmt in OUT_DIR_FILES:
            paths.append(base / OUT_DIR_FILES[fmt])
        for path in dict.fromkeys(p.resolve() for p in paths):
            text = render(fmt, report, link_prefix=_prefix(path, base))
            written.append((fmt, write_atomic(path, text)))
    return written
