"""`meshcert report render`: turn cert.json or an evidence report into HTML / Markdown / JUnit."""

from __future__ import annotations

from typing import Annotated

import typer

app = typer.Typer(help="Render reports for reviewers (HTML, Markdown, JUnit XML).",
                  no_args_is_help=True, rich_markup_mode=None)

HtmlOpt = Annotated[str | None, typer.Option(
    "--html", help="Write a self-contained HTML report here.")]
MdOpt = Annotated[str | None, typer.Option(
    "--md", help="Write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY).")]
JunitOpt = Annotated[str | None, typer.Option(
    "--junit", help="Write JUnit XML here (for CI test dashboards).")]


@app.command("render")
def render(
    report: Annotated[str, typer.Argument(
        metavar="REPORT.json",
        help="cert.json from `models certify`, or an evidence report (decisions.json).")],
    html: HtmlOpt = None,
    md: MdOpt = None,
    junit: JunitOpt = None,
) -> None:
    """Render a report JSON; exit 2 when it is unreadable or not a meshcert report."""
    from reports.loader import ReportLoadError, load_report
    from reports.outputs import write_reports

    if html is None and md is None and junit is None:
        raise typer.BadParameter("give at least one of --html, --md, --junit",
                                 param_hint="--html / --md / --junit")
    try:
        loaded = load_report(report)
    except ReportLoadError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    try:
        written = write_reports(loaded, html=html, md=md, junit=junit)
    except OSError as exc:
        typer.echo(f"error: cannot write report: {exc}", err=True)
        raise typer.Exit(1) from None
    for kind, path in written.items():
        typer.echo(f"{kind}: {path}")
