"""The report formats: for each format name, the renderer of each report kind it supports.

Every writer looks a renderer up here (`render`); nothing else decides which function renders
which report. A report's kind comes from its model class (`kind_of`). Renderers are named as
"module:function" and imported when their format is first asked for, so a `models certify`
without --html never imports jinja2 and a certification never imports the evidence models.

The layout, without exception: the renderer of kind K in format F is a function of
`meshcert/reports/<K>/<F>.py` (K a value of KINDS; F the format's name, but `markdown.py` for
`md` and for `summary`), beside that kind's format-neutral view (`reports/<K>/view.py`). The
one row that is not a renderer module is `json`: the report model's own JSON (`render_json`).
tests/reports/test_layout.py walks REPORT_FORMATS and every `render_` function under
meshcert/reports/ and holds them to it.

Adding a format: one module per kind it renders, each a `render_...(report) -> str`, and its
row in REPORT_FORMATS below. A row with a `ReportOption` (its flag and help) is an option of every
command that writes reports: meshcert/cli/report_options.py adds one option per such row and
hands the command the paths given as one `ReportOutputs` (format -> path) for
`meshcert.reports.outputs.write_reports`; no file under meshcert/cli/ names a format.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol, cast


class Report(Protocol):
    """What every report model offers (CertReport, EvidenceReport, CatalogReport)."""

    def to_json(self) -> str: ...


# The report model of each kind, by module and class name: a report is an instance of its
# class, so looking a kind up never imports another kind's models.
KINDS: dict[str, str] = {
    "meshcert.certify.report.CertReport": "certification",
    "meshcert.evidence.report.EvidenceReport": "evidence",
    "meshcert.catalog.report.CatalogReport": "catalog",
}


@dataclass(frozen=True)
class Renderer:
    """A renderer by name. `links`: it takes a link prefix, the way from its page to the files
    written beside it (a catalog page links each package's cert files)."""

    target: str  # "module:function"
    links: bool = False

    def load(self) -> Callable[..., str]:
        module, function = self.target.split(":")
        return cast("Callable[..., str]", getattr(importlib.import_module(module), function))


def render_json(report: Report) -> str:
    """The report model's own JSON (cert.json, decisions.json, catalog.json)."""
    return report.to_json()


@dataclass(frozen=True)
class ReportOption:
    """The option of the commands that write reports which takes this format's file."""

    flag: str  # "--html"
    help: str


@dataclass(frozen=True, eq=False)
class ReportFormat(Mapping[str, Renderer]):
    """A row of REPORT_FORMATS: kind -> renderer, and the option that asks for the format (None: a
    file the commands name themselves, such as cert.json or summary.md)."""

    renderers: dict[str, Renderer]
    option: ReportOption | None = None

    def __getitem__(self, kind: str) -> Renderer:
        return self.renderers[kind]

    def __iter__(self) -> Iterator[str]:
        return iter(self.renderers)

    def __len__(self) -> int:
        return len(self.renderers)


_JSON = Renderer("meshcert.reports.registry:render_json")

# format -> kind -> renderer (and the commands' option); a writer writes the formats asked for
# in this order, and the commands list the options in it.
REPORT_FORMATS: dict[str, ReportFormat] = {
    "json": ReportFormat({"certification": _JSON, "evidence": _JSON, "catalog": _JSON}),
    "html": ReportFormat({
        "certification": Renderer("meshcert.reports.certification.html:render_cert_html"),
        "evidence": Renderer("meshcert.reports.evidence.html:render_evidence_html"),
        "catalog": Renderer("meshcert.reports.catalog.html:render_catalog_html", links=True),
    }, ReportOption("--html", "Write a self-contained HTML report here.")),
    "md": ReportFormat({
        "certification": Renderer("meshcert.reports.certification.markdown:render_cert_markdown"),
        # one Markdown document per evidence report: --md is summary.md
        "evidence": Renderer("meshcert.reports.evidence.markdown:render_evidence_summary"),
        "catalog": Renderer("meshcert.reports.catalog.markdown:render_catalog_markdown",
                            links=True),
    }, ReportOption("--md", "Write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY).")),
    "junit": ReportFormat({
        "certification": Renderer("meshcert.reports.certification.junit:render_cert_junit"),
        "evidence": Renderer("meshcert.reports.evidence.junit:render_evidence_junit"),
        "catalog": Renderer("meshcert.reports.catalog.junit:render_catalog_junit"),
    }, ReportOption("--junit", "Write JUnit XML here (for CI test dashboards).")),
    "sarif": ReportFormat({
        "certification": Renderer("meshcert.reports.certification.sarif:render_sarif"),
        "evidence": Renderer("meshcert.reports.evidence.sarif:render_evidence_sarif"),
        "catalog": Renderer("meshcert.reports.catalog.sarif:render_catalog_sarif"),
    }, ReportOption("--sarif", "Write SARIF 2.1.0 here (for code-scanning dashboards).")),
    # summary.md beside decisions.json: the evidence report in the layout of the Phase E
    # script's summary (meshcert.reports.outputs.write_decisions)
    "summary": ReportFormat({
        "evidence": Renderer("meshcert.reports.evidence.markdown:render_evidence_summary"),
    }),
}


# format -> path: the report files a command was asked for, one per option given (the formats
# not asked for are absent); `meshcert.reports.outputs.write_reports(report, **outputs)` writes
# them.
ReportOutputs = Mapping[str, str]
NO_OUTPUTS: ReportOutputs = MappingProxyType({})


def report_options() -> dict[str, ReportOption]:
    """format -> its option, for the formats the commands take as options, in REPORT_FORMATS' order
    (read when a command is built, so a row added at run time is an option too)."""
    return {fmt: row.option for fmt, row in REPORT_FORMATS.items() if row.option is not None}


def kind_of(report: object) -> str:
    """The kind of a report model ("certification", "evidence", "catalog")."""
    for cls in type(report).__mro__:
        kind = KINDS.get(f"{cls.__module__}.{cls.__qualname__}")
        if kind is not None:
            return kind
    raise TypeError(f"not a meshcert report: {type(report).__name__}")


def renderer(fmt: str, kind: str) -> Renderer:
    """The renderer of `kind` in `fmt`; ValueError when that format does not render it."""
    if fmt not in REPORT_FORMATS:
        raise ValueError(f"unknown report format {fmt!r} (known: {', '.join(REPORT_FORMATS)})")
    found = REPORT_FORMATS[fmt].get(kind)
    if found is None:
        raise ValueError(f"the {fmt} format does not render a {kind} report")
    return found


def render(fmt: str, report: Report, *, link_prefix: str = "") -> str:
    """`report` in format `fmt`. link_prefix: the way from the page's folder to the files
    written beside it (read only by the renderers that link to them)."""
    chosen = renderer(fmt, kind_of(report))
    function = chosen.load()
    return function(report, link_prefix) if chosen.links else function(report)
