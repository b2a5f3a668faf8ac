"""`meshcert report render`: turn cert.json or an evidence report into HTML / Markdown / JUnit."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated

import typer

from meshcert.cli.deliver import undeliverable
from meshcert.cli.exit_codes import Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.report_options import NO_OUTPUTS, ReportOutputs, report_outputs
from meshcert.cli.shared_options import QuietOpt, json_option

if TYPE_CHECKING:
    from meshcert.certify.merge import Slice
    from meshcert.certify.report import CertReport

app = typer.Typer(help="Render reports for reviewers (HTML, Markdown, JUnit XML, SARIF).",
                  no_args_is_help=True, rich_markup_mode=None)



@app.command("render")
@report_outputs
def render(
    report: Annotated[str, typer.Argument(
        metavar="REPORT.json",
        help="cert.json from `models certify`, or an evidence report (decisions.json).")],
    outputs: ReportOutputs = NO_OUTPUTS,
    json_out: Annotated[bool, json_option(
        "Print the report JSON (validated) on stdout, and nothing else.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Render a report JSON; exit 2 when it is unreadable or not a meshcert report, 3 when a
    file cannot be written."""
    from meshcert.reports.loader import load_report
    from meshcert.reports.outputs import write_reports
    from meshcert.reports.report_options import check_render_outputs

    with option_errors():
        check_render_outputs(outputs)
    loaded = load_report(report)  # unreadable, or a verdict it contradicts: the error's ending
    try:
        written = write_reports(loaded, **outputs)
    except OSError as exc:
        raise undeliverable(exc) from None
    if json_out:
        typer.echo(loaded.to_json(), nl=False)
    elif not quiet:
        for kind, path in written.items():
            typer.echo(f"{kind}: {path}")


@app.command("merge")
@report_outputs
def merge(
    slices: Annotated[list[str], typer.Argument(
        metavar="SLICE.json...",
        help="cert.json of each slice (`models certify --stage I/N` on each node).")],
    report_out: Annotated[str | None, typer.Option(
        "--report-out", help="Write the merged cert.json here.")] = None,
    json_out: Annotated[bool, json_option("Print the merged JSON.")] = False,
    quiet: QuietOpt = False,
    outputs: ReportOutputs = NO_OUTPUTS,
    attest_key: Annotated[str | None, typer.Option(
        "--attest-key", metavar="NAME.key", help="Sign the merged result when the slices "
        "cover every layer and artifact (docs/attestation.md).")] = None,
    attestation_out: Annotated[str | None, typer.Option(
        "--attestation-out", metavar="PATH", help="--attest-key: write the attestation here "
        "(default: <report stem>.intoto.jsonl beside --report-out).")] = None,
) -> None:
    """Merge slice reports into one for the package; exit 0 passed, 1 failed, 2 unreadable
    input, 3 incomplete (some layers or artifacts verified by no slice)."""
    from meshcert.attest.requests import check_attestation_out
    from meshcert.certify.merge import merge_slices
    from meshcert.cli.exit_codes import EXIT_CODES
    from meshcert.core.atomic import write_atomic
    from meshcert.reports.outputs import write_reports

    with option_errors():
        check_attestation_out(attest_key, attestation_out)
    signing = None
    if attest_key is not None:
        from meshcert.cli.attest_cmd import load_signing_key
        from meshcert.cli.attest_sign import attestation_target

        signing = load_signing_key(attest_key), attestation_target(report_out, attestation_out)
    loaded = _load_slices(slices)
    merged = merge_slices(loaded)
    if signing is not None:
        from meshcert.cli.attest_sign import sign_certification

        merged = sign_certification(merged, signing[0], signing[1])
    try:
        if report_out:
            write_atomic(report_out, merged.to_json())
        written = write_reports(merged, **outputs)
    except OSError as exc:
        raise undeliverable(exc) from None
    if json_out:
        typer.echo(merged.to_json(), nl=False)
    elif not quiet:
        _print_merge(merged, len(loaded), written, report_out)
    raise typer.Exit(EXIT_CODES[merged.status])


def _load_slices(paths: list[str]) -> list[Slice]:
    """Each slice's cert.json; one that cannot be read, or is not a certification, is a usage
    error (exit 2) naming it; one that contradicts itself, or a slice given twice, is refused
    (exit 2) naming it."""
    from meshcert.certify.merge import Slice
    from meshcert.certify.report import CertReport
    from meshcert.reports.consistency import ContradictoryReport, duplicate_slices
    from meshcert.reports.loader import load_report

    loaded: list[Slice] = []
    for path in paths:
        report = load_report(path, what="merged")
        if not isinstance(report, CertReport):
            typer.echo(f"error: {path}: not a cert.json (an evidence report?)", err=True)
            raise typer.Exit(Exit.USAGE)
        loaded.append(Slice(path, report))
    repeated = duplicate_slices([(s.name, s.report) for s in loaded])
    if repeated:
        raise ContradictoryReport("nothing merged: " + "; ".join(repeated))
    return loaded


def _print_merge(merged: CertReport, slices: int, written: Mapping[str, object],
                 report_out: str | None) -> None:
    info = merged.merge
    covered = f"{info.verified_artifacts}/{info.declared_artifacts}" if info else "?"
    typer.echo(f"{merged.status.upper()}: {slices} slice(s), {covered} artifacts "
               "verified")
    from meshcert.cli.cert_console import counts_line

    typer.echo(counts_line(merged))  # the merged verdict, as models certify ends
    for f in merged.findings:
        if f.check == "slice_merge":
            typer.echo(f"  {f.code}: {f.message}")
    for kind, out in written.items():
        typer.echo(f"{kind}: {out}")
    if report_out:
        typer.echo(f"report: {report_out}")


@app.command("emit", hidden=True)
def emit(
    report: Annotated[str, typer.Argument(
        metavar="REPORT.json", help="The report file to print as log lines.")],
    tag: Annotated[str, typer.Option(help="Names the report among others in one log.")],
) -> None:
    """Print a report as checksummed log lines (how an HF job hands its report back; see
    meshcert/hubjobs/report_channel.py). Exit 2 when the report cannot be read."""
    from meshcert.hubjobs.report_channel import encode

    try:
        with open(report, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        typer.echo(f"error: cannot read {report}: {exc.strerror or exc}", err=True)
        raise typer.Exit(Exit.USAGE) from None
    typer.echo("\n".join(encode(raw, tag)))
