"""Why a write stops. The CLI maps each to its exit status: a refusal
(`meshcert.core.errors.Refused`, with the writer's refusal code) is 2 and leaves nothing written
or changed; an Aborted run (a failing or file-changing hook) is 2 and leaves no manifest; an
Interrupted run (Ctrl-C) is 130 and leaves no manifest."""

from __future__ import annotations

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.exit_status import ExitStatus


class Aborted(MeshcertError):
    """Writing stopped part-way (the artifacts written so far are kept for --resume). A failure
    that exits 2, as a refusal does: no manifest was written."""

    kind = ErrorKind.FAILURE

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    @property
    def exit_status(self) -> ExitStatus:
        return ErrorKind.REFUSAL.exit_status


class Interrupted(MeshcertError):
    """Cancelled (Ctrl-C): no manifest was written."""

    kind = ErrorKind.INTERRUPTED
