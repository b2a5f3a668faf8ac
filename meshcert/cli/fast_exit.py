"""End the process without tearing the interpreter down.

When a command has finished, CPython's finalization clears every module and frees every object
one at a time: with typer, pydantic and the engine loaded that is 30-40 ms of a 0.3 s
`meshcert models certify` (bench/whole_process.py), spent on memory the OS reclaims anyway.

`exit_without_teardown(status)` does what finalization does that anyone can observe, in the same
order -- join the non-daemon threads, run every atexit hook (spare-worker cleanup, logging
shutdown, a coverage tool's data file), flush stdout and stderr -- then `os._exit(status)`.
Only the console entry point (`meshcert.cli.main`) calls it, and only once the command has
ended with a status; an unexpected exception still gets the interpreter's own traceback and
exit. In-process callers (tests, CliRunner) never reach it.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn


def status_of(exc: SystemExit) -> int:
    """The exit status the interpreter would give `exc` (printing a text code, as it does)."""
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def exit_without_teardown(status: int) -> NoReturn:
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()  # what finalization runs next; it also unregisters them
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be written anyway
            pass
    os._exit(status)
