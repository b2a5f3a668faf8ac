"""What rich would decide about an output stream -- a terminal or not, and how wide -- decided
without importing rich.

`import rich.console` is ~20 ms, a twelfth of a `meshcert models certify` (bench/
whole_process.py). Written to a pipe or a file (a CI log, a script's capture), rich prints no
colour and no progress bar, so the summary is plain text and rich is not needed at all. These
functions follow rich's own rules (`Console.is_terminal` and `Console.size` as of rich 14,
which added TTY_COMPATIBLE); tests/meshcert/test_terminal.py holds them equal to the installed
rich's answers. Where this module cannot be sure (Windows consoles, IPython), `plain_stream`
says no and rich decides as before.
"""

from __future__ import annotations

import builtins
import os
from typing import TextIO


def may_be_terminal(stream: TextIO) -> bool:
    """False only where rich's `Console(file=stream).is_terminal` is False too: TTY_COMPATIBLE
    (0 or 1) decides first, then FORCE_COLOR (set and not empty), then `isatty()`."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in {"0", "1"}:
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if isatty is not None else False
    except ValueError:  # a closed stream
        return False


def plain_stream(stream: TextIO) -> bool:
    """Whether rich would write to `stream` as plain text, with no colour and no live display."""
    if os.name == "nt" or "get_ipython" in vars(builtins):  # legacy consoles, Jupyter
        return False
    return not may_be_terminal(stream)


def plain_width() -> int:
    """rich's `Console().width` when it does not write to a terminal: COLUMNS when it is all
    digits, else the size of the first of stdin, stdout and stderr that is a terminal, else 80."""
    columns = os.environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    width = 0
    for descriptor in (0, 1, 2):
        try:
            width = os.get_terminal_size(descriptor).columns
        except (AttributeError, ValueError, OSError):  # not a terminal
            continue
        break
    return width or 80
