"""The one error family: every exception meshcert raises on purpose is a `MeshcertError`.

Each error says what kind it is, and the kind decides the exit status a command ends with
when the error reaches the CLI (the statuses of `meshcert.cli.exit_codes.Exit`):

- `USAGE` (2): the arguments or an input file given cannot be used.
- `REFUSAL` (2): the work is refused before it starts; nothing was spent, written or uploaded.
  `Refused` is the one class of this kind.
- `FAILURE` (1): the work ran and something it met is wrong.
- `INCOMPLETE` (3): the work could not finish (the Hub, the network or a worker failed us), so
  there is no verdict.
- `INTERRUPTED` (130): cancelled (Ctrl-C); what was done so far is kept.

The CLI turns any of them into its message and that status in one place
(`meshcert.cli.errors.error_exit`), never by the class's name.
"""

from __future__ import annotations

from enum import Enum


class ErrorKind(Enum):
    USAGE = "usage error"
    REFUSAL = "refusal"
    FAILURE = "failure"
    INCOMPLETE = "incomplete"
    INTERRUPTED = "interrupted"

    @property
    def exit_status(self) -> int:
        return _EXIT_STATUS[self]


_EXIT_STATUS = {ErrorKind.USAGE: 2, ErrorKind.REFUSAL: 2, ErrorKind.FAILURE: 1,
                ErrorKind.INCOMPLETE: 3, ErrorKind.INTERRUPTED: 130}


class MeshcertError(Exception):
    """The base of every meshcert error. `kind` says what sort of error it is (a class sets it;
    an instance may narrow it, e.g. a catalog that could not be read at all is incomplete)."""

    kind: ErrorKind = ErrorKind.FAILURE

    @property
    def exit_status(self) -> int:
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
