"""Why a write stops. The CLI maps each to its exit status: a Refusal is 2 and
leaves nothing written or changed; an Aborted run (a failing or file-changing hook) is 2 and
leaves no manifest; an Interrupted run (Ctrl-C) is 130 and leaves no manifest."""

from __future__ import annotations


class Refusal(Exception):
    """The write is refused before any byte is written."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Aborted(Exception):
    """Writing stopped part-way (the artifacts written so far are kept for --resume)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Interrupted(Exception):
    """Cancelled (Ctrl-C): no manifest was written."""
