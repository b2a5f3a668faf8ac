"""Write a catalog run's files: each package's cert.json and cert.html under --out-dir (as the
packages are certified), and the catalog report as JSON, HTML, Markdown, JUnit and SARIF.

--out-dir DIR holds packages/<ns>/<name>/<commit>/cert.{json,html}, catalog.json and
catalog.html; the report's paths are relative to DIR, so the page's links hold wherever DIR is
moved. A row re-used from a --since report gets its files copied from beside that report.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from meshcert.catalog.model import CatalogReport
from meshcert.certify.report import CertReport
from meshcert.core.atomic import write_atomic

CATALOG_JSON = "catalog.json"
CATALOG_HTML = "catalog.html"


class PackageReportWriter:
    """`on_certified` for a catalog run: writes each package's cert.json and cert.html."""

    def __init__(self, out_dir: str | os.PathLike[str]) -> None:
        self.out_dir = Path(out_dir)

    def __call__(self, repo: str, commit: str, report: CertReport) -> None:
        from meshcert.catalog.run import cert_paths
        from meshcert.reports.html import render_cert_html

        json_rel, html_rel = cert_paths(repo, commit)
        write_atomic(self.out_dir / json_rel, report.to_json())
        write_atomic(self.out_dir / html_rel, render_cert_html(report))


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
                          html: str | os.PathLike[str] | None = None,
                          md: str | os.PathLike[str] | None = None,
                          junit: str | os.PathLike[str] | None = None,
                          sarif: str | os.PathLike[str] | None = None
                          ) -> list[tuple[str, Path]]:
    """Write each requested format (with --out-dir: catalog.json and catalog.html there too);
    returns (format, path) for each file written."""
    from meshcert.reports.catalog.html import render_catalog_html
    from meshcert.reports.catalog.junit import render_catalog_junit
    from meshcert.reports.catalog.markdown import render_catalog_markdown
    from meshcert.reports.catalog.sarif import render_catalog_sarif

    base = Path(out_dir) if out_dir is not None else None
    targets: dict[str, list[Path]] = {"json": [], "html": [], "md": [], "junit": [],
                                      "sarif": []}
    for fmt, given, default in (("json", report_out, CATALOG_JSON), ("html", html, CATALOG_HTML),
                                ("md", md, None), ("junit", junit, None),
                                ("sarif", sarif, None)):
        if given is not None:
            targets[fmt].append(Path(given))
        if base is not None and default is not None:
            targets[fmt].append(base / default)
    written: list[tuple[str, Path]] = []
    for fmt, paths in targets.items():
        for path in dict.fromkeys(p.resolve() for p in paths):
            if fmt == "json":
                text = report.to_json()
            elif fmt == "html":
                text = render_catalog_html(report, _prefix(path, base))
            elif fmt == "md":
                text = render_catalog_markdown(report, _prefix(path, base))
            elif fmt == "sarif":
                text = render_catalog_sarif(report)
            else:
                text = render_catalog_junit(report)
            written.append((fmt, write_atomic(path, text)))
    return written
