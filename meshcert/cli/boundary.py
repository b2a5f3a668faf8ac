"""The one place an error becomes a command's ending: the command line's root group
(`Boundary`, the class of `meshcert` itself, meshcert.cli.root.SETTINGS) catches every
exception a command, or a group's callback, lets through.

- A `MeshcertError` (meshcert.core.errors) is printed on stderr as one line, `refused:
  <message>` for a refusal and `error: <message>` otherwise, and the command exits with the
  status of the error's kind (meshcert.core.exit_status: 2 usage error or refusal, 1 failure,
  3 incomplete, 130 interrupted), never by the error's class. Commands catch an error only to
  add something to its ending (a refusal's code, the unreadable inputs, a report kept).
- An operating-system error (a file that exists, a full disk, a permission) is not a bug: one
  line, `error: <what the system said>: <file> (the command did not finish)`, and exit 3
  (`INCOMPLETE`: what the command was to write may be missing).
- Anything else is a bug: one line, `internal error: <type> ...`, and exit 3 (`INCOMPLETE`,
  as docs/RELIABILITY.md says of a crash: no verdict), never a traceback. Only the type is
  named: an exception's text may quote a secret (a token in a URL or a header).
- typer's and click's own endings (`typer.Exit`, `typer.Abort`, a usage error), an end of
  input (EOFError: typer aborts) and a closed pipe (click's status) pass through unchanged,
  as does Ctrl-C (typer's status 130).
"""

from __future__ import annotations

import errno
from typing import Any

import typer
from typer.core import TyperGroup

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.exit_status import Exit

INTERNAL_ERROR = ("internal error: {name} (a bug in meshcert: please report it, with the "
                  "command that ran); the command did not finish")


def error_exit(exc: MeshcertError) -> typer.Exit:
    """Print the error's line on stderr; the `typer.Exit` to raise, with its exit status."""
    prefix = "refused" if exc.kind is ErrorKind.REFUSAL else "error"
    typer.echo(f"{prefix}: {exc}", err=True)
    return typer.Exit(exc.exit_status)


def internal_error(exc: BaseException) -> typer.Exit:
    """Print the one line of a bug (its type, never its text); exit 3, no verdict."""
    typer.echo(INTERNAL_ERROR.format(name=type(exc).__name__), err=True)
    return typer.Exit(Exit.INCOMPLETE)


def os_error(exc: OSError) -> typer.Exit:
    """Print what the system said about which file; exit 3, the command did not finish."""
    what = exc.strerror or type(exc).__name__
    where = f": {exc.filename}" if exc.filename is not None else ""
    typer.echo(f"error: {what}{where} (the command did not finish)", err=True)
    return typer.Exit(Exit.INCOMPLETE)


def _passes_through(exc: Exception) -> bool:
    """typer's own endings, an end of input and a closed pipe: typer ends them as it does."""
    return isinstance(exc, typer.Exit | typer.Abort | typer.TyperException | EOFError) or (
        isinstance(exc, OSError) and exc.errno == errno.EPIPE)


class Boundary(TyperGroup):
    """The root group: runs the command named, and ends any exception it lets through."""

    def invoke(self, ctx: Any) -> Any:  # a click context (typer's vendored click)
        try:
            return super().invoke(ctx)
        except MeshcertError as exc:
            raise error_exit(exc) from None
        except Exception as exc:
            if _passes_through(exc):
                raise
            if isinstance(exc, OSError):
                raise os_error(exc) from None
            raise internal_error(exc) from None
