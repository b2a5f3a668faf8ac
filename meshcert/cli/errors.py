"""The one place an error becomes a command's ending: any `MeshcertError` (meshcert.core.errors)
is printed on stderr, `refused: <message>` for a refusal and `error: <message>` otherwise, and
the command exits with the status of the error's kind (2 usage error or refusal, 1 failure,
3 incomplete, 130 interrupted). Commands catch the errors their work can raise and hand them
here; they never pick a status by the error's class."""

from __future__ import annotations

import typer

from meshcert.core.errors import ErrorKind, MeshcertError


def error_exit(exc: MeshcertError) -> typer.Exit:
    """Print the error's line on stderr; the `typer.Exit` to raise, with its exit status."""
    prefix = "refused" if exc.kind is ErrorKind.REFUSAL else "error"
    typer.echo(f"{prefix}: {exc}", err=True)
    return typer.Exit(exc.exit_status)
