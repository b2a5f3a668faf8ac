"""Whether output to a stream is plain text -- no colour, no live display -- and how wide, as
rich itself answers it (`Console.is_terminal`, `Console.is_jupyter`, `Console.width`).

Written to a pipe or a file (a CI log, a script's capture), rich prints no colour and no
progress bar, so the CLI writes its summary as plain text itself and draws no bars.
"""

from __future__ import annotations

import io
from typing import TextIO

from rich.console import Console


def plain_stream(stream: TextIO) -> bool:
    """Whether rich would write to `stream` as plain text, with no colour and no live display:
    rich does not treat it as a terminal (TTY_COMPATIBLE, then FORCE_COLOR, then `isatty()`),
    and it is not a Jupyter console, where rich renders its own output."""
    console = Console(file=stream)
    return not console.is_terminal and not console.is_jupyter


def plain_width() -> int:
    """The width rich gives output that goes to no terminal: COLUMNS when it is all digits, else
    the size of the first of stdin, stdout and stderr that is a terminal, else 80."""
    return Console(file=io.StringIO()).width
