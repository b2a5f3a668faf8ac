"""The one error family: every exception meshcert raises on purpose is a `MeshcertError`.

Each error says what kind it is, and the kind decides the exit status a command ends with
when the error reaches the CLI (the statuses of meshcert.core.exit_status, defined there once):

- `USAGE` (`Exit.USAGE`, 2): the arguments or an input file given cannot be used.
- `REFUSAL` (`Exit.REFUSED`, 2): the work is refused before it starts; nothing was spent,
  written or uploaded. `Refused` is the one class of this kind.
- `FAILURE` (`Exit.FAILED`, 1): the work ran and something it met is wrong.
- `INCOMPLETE` (`Exit.INCOMPLETE`, 3): the work could not finish (the Hub, the network or a
  worker failed us), so there is no verdict.
- `INTERRUPTED` (`Exit.INTERRUPTED`, 130): cancelled (Ctrl-C); what was done so far is kept.

The CLI turns any of them into its message and that status in one place, the error boundary
at its root (`meshcert.cli.boundary`), never by the class's name.
"""

from __future__ import annotations

from enum import Enum

from meshcert.core.exit_status import Exit, ExitStatus


class ErrorKind(Enum):
    USAGE = "usage error"
    REFUSAL = "refusal"
    FAILURE = "failure"
    INCOMPLETE = "incomplete"
    INTERRUPTED = "interrupted"

    @property
    def exit_status(self) -> ExitStatus:
        return _EXIT_STATUS[self]


_EXIT_STATUS = {ErrorKind.USAGE: Exit.USAGE, ErrorKind.REFUSAL: Exit.REFUSED,
                ErrorKind.FAILURE: Exit.FAILED, ErrorKind.INCOMPLETE: Exit.INCOMPLETE,
                ErrorKind.INTERRUPTED: Exit.INTERRUPTED}


class MeshcertError(Exception):
    """The base of every meshcert error. `kind` says what sort of error it is (a class sets it;
    an instance may narrow it, e.g. a catalog that could not be read at all is incomplete)."""

    kind: ErrorKind = ErrorKind.FAILURE

    @property
    def exit_status(self) -> ExitStatus:
        """The status a command exits with when this error ends it."""
        return self.kind.exit_status


class Refused(MeshcertError):
    """The work is refused before it starts: nothing was spent, written or uploaded.
    `message` says why (and what to do); `code` names the reason where a finding code or a
    writer's refusal code exists for it."""

    kind = ErrorKind.REFUSAL

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
