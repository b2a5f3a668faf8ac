"""Deliver a certification report: the files asked for, the summary or JSON, the exit status
(shared by `models certify`, `models inspect` and `models certify --hf-job`)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer

from meshcert.cli.exit_codes import EXIT_CODES, Exit
from meshcert.reports.registry import NO_OUTPUTS, ReportOutputs

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport


def undeliverable(exc: OSError) -> typer.Exit:
    """A report file that cannot be written: say which and why; the run is incomplete (its
    verdict did not reach the reader), never passed."""
    typer.echo(f"error: cannot write {exc.filename or 'a report'}: {exc.strerror or exc}",
               err=True)
    return typer.Exit(Exit.INCOMPLETE)


def deliver(report: CertReport, *, report_out: str | None, json_out: bool, quiet: bool,
            outputs: ReportOutputs = NO_OUTPUTS, inspect: bool = False) -> NoReturn:
    """Write the requested files, print, and exit with the report's status."""
    from meshcert.cli.cert_console import print_certification
    from meshcert.core.atomic import write_atomic
    from meshcert.reports.outputs import write_reports

    try:
        if report_out:
            write_atomic(report_out, report.to_json())
        write_reports(report, **outputs)
    except OSError as exc:  # the verdict cannot be delivered: never claim success
        raise undeliverable(exc) from None
    if json_out:
        from meshcert.cli.pipe import write_or_drop

        write_or_drop(sys.stdout, report.to_json())
    else:
        print_certification(report, report_out, quiet=quiet, inspect=inspect)
    raise typer.Exit(EXIT_CODES[report.status])
