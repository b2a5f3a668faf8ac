"""Writing a command's output to a reader that may leave early (`meshcert ... | head -1`).

Every command's exit status is its verdict's, whether or not its reader stayed: the entry
point (meshcert.cli.main) calls `keep_status_on_closed_pipes` once, before any command runs,
so a write to a closed pipe never raises (click would turn that BrokenPipeError into exit 1,
and which write met the closed pipe first would decide the status, run to run). The rest of
the output goes to the null device; the command finishes and exits with its own status.
"""

from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from _typeshed import ReadableBuffer


def _to_devnull(fd: int) -> None:
    """Point `fd` at the null device: later writes (and the exit's flush) succeed."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)


def write_or_drop(stream: TextIO, text: str) -> None:
    """Write `text` and flush. If the reader has gone, the rest is dropped and later writes
    (the exit's flush) go to the null device. The exit status stays the verdict's, where
    rich and click would exit 1, which reads as "failed"."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        _to_devnull(stream.fileno())


class _DropOnClosedPipe(io.RawIOBase):
    """A file descriptor that, once its reader has gone, drops what is written to it."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: ReadableBuffer, /) -> int:
        view = memoryview(data)
        try:
            return os.write(self._fd, view)
        except BrokenPipeError:
            _to_devnull(self._fd)   # the reader left: the rest of the output is dropped
            return len(view)

    def close(self) -> None:       # the descriptor stays the interpreter's to close
        super().close()


def _guarded(stream: TextIO | None) -> TextIO | None:
    """`stream` rebuilt over a `_DropOnClosedPipe` (same encoding, errors and buffering), or
    unchanged when it is a terminal (which never closes early) or not a real file."""
    if stream is None or not isinstance(stream, io.TextIOWrapper):
        return stream
    try:
        fd = stream.fileno()
        if os.isatty(fd):
            return stream
    except (OSError, ValueError):
        return stream
    stream.flush()
    buffered = io.BufferedWriter(_DropOnClosedPipe(fd))
    return io.TextIOWrapper(buffered, encoding=stream.encoding, errors=stream.errors,
                            line_buffering=stream.line_buffering,
                            write_through=stream.write_through)


def keep_status_on_closed_pipes() -> None:
    """Make stdout and stderr drop output to a reader that has gone instead of raising, so
    every command exits with its own status (docs/certify.md)."""
    out, err = _guarded(sys.stdout), _guarded(sys.stderr)
    if out is not None:
        sys.stdout = out
    if err is not None:
        sys.stderr = err
