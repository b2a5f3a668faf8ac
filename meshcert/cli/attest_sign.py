"""`--attest-key` on the certify commands: sign the finished report, write the
`.intoto.jsonl` beside it, and say on stderr what was signed, or why nothing was.

The key is read on this machine only; its bytes are never printed, logged or passed on."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from meshcert.cli.exit_codes import Exit
from meshcert.cli.option_errors import option_errors

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.attest.statement import VerdictOptions
    from meshcert.certify.report import CertReport


def attestation_target(report_out: str | None, attestation_out: str | None) -> str:
    """Where the attestation goes; a usage error when neither path is given."""
    from meshcert.attest.requests import attestation_path

    with option_errors():
        return attestation_path(report_out, attestation_out)


def sign_certification(report: CertReport, key: Ed25519PrivateKey, path: str, *,
                       options: VerdictOptions | None = None, quiet: bool = False
                       ) -> CertReport:
    """The report to deliver: signed (with its attestation summary) or as it was. Why none
    was made is always said; what was signed is not under --quiet."""
    from meshcert.attest.sign import sign_report, write_attestation

    signed = sign_report(report, key, path, options=options)
    if isinstance(signed, str):
        typer.echo(f"attestation: none made: {signed}", err=True)
        return report
    try:
        write_attestation(path, [signed.envelope])
    except OSError as exc:
        typer.echo(f"error: cannot write {exc.filename or path}: {exc.strerror or exc}",
                   err=True)
        raise typer.Exit(Exit.INCOMPLETE) from None
    summary = signed.report.attestation
    assert summary is not None
    if not quiet:
        import shlex

        typer.echo(f"attestation: {path}: {summary.result}, signer {summary.signer}, "
                   f"{summary.subjects} subject(s)", err=True)
        package = report.resolved_package_ref or report.input
        typer.echo(f"  verify it: meshcert attest verify {shlex.quote(package)} --attestation "
                   f"{shlex.quote(path)} --trusted-key {summary.signer}", err=True)
    return signed.report


def publish_signer(key: Ed25519PrivateKey) -> Callable[[CertReport], bytes | str]:
    """--attest-key on the publish commands: the published certification -> the attestation
    file's bytes (committed by meshcert/publish/attestation.py), or why none can be made."""
    from meshcert.attest.package_state import ATTESTATION_PATH
    from meshcert.attest.sign import sign_report

    def sign(report: CertReport) -> bytes | str:
        signed = sign_report(report, key, ATTESTATION_PATH)
        return signed if isinstance(signed, str) else signed.envelope.to_json_line().encode()

    return sign
