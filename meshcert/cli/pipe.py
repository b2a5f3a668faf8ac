"""Writing a command's output to a reader that may leave early (`meshcert ... | head -1`)."""

from __future__ import annotations

import os
from typing import TextIO


def write_or_drop(stream: TextIO, text: str) -> None:
    """Write `text` and flush. If the reader has gone, the rest is dropped and later writes
    (the exit's flush) go to the null device. The exit status stays the verdict's, where
    rich and click would exit 1, which reads as "failed"."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
