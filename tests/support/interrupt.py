"""Ctrl-C a child process once it says it is inside the work, never after a time.

The child writes `marker` when it has reached the part to interrupt; a loaded machine can slow
it, but cannot change which part the SIGINT lands in (pytest-timeout bounds a hang).

However the suite is started, the Ctrl-C arrives: a shell starts a background job of a
non-interactive shell (`nohup`, `cmd &` in a script, many CI runners) with SIGINT ignored, and a
child inherits that. So every child these tests interrupt is started by `start_interruptible`,
which gives it back the default SIGINT (Python then turns it into KeyboardInterrupt, as at a
terminal) in a process group of its own; and `end_tree` ends the whole tree it started (a
hook in a session of its own included), so nothing a test started outlives it or holds its
pipes open.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, AnyStr

# how long the pipes of an ended tree may take to close before they are given up on
_DRAIN_S = 30


def default_sigint() -> None:
    """A `preexec_fn`: the child gets the default SIGINT whatever its parent ignores."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start_interruptible(argv: Sequence[str], **kwargs: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen` of a child a test will Ctrl-C: SIGINT restored, its own group."""
    return subprocess.Popen(list(argv), preexec_fn=default_sigint, start_new_session=True,
                            **kwargs)


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (children, theirs, ...), read from /proc (Linux); a child in
    a session of its own is still a child."""
    parents: dict[int, list[int]] = {}
    if not os.path.isdir("/proc"):  # no procfs (macOS): the process group is all we end
        return []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:  # ended while we looked
            continue
        # the command name (in parentheses) may hold spaces: the ppid is after its last ")"
        ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        parents.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in parents.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def end_tree(process: subprocess.Popen[AnyStr]) -> None:
    """SIGKILL `process`, its process group and every descendant (found before any is killed,
    while they are still its descendants); then wait for it and its pipes."""
    below = descendants(process.pid)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)  # a start_interruptible child leads one
    if process.poll() is None:
        process.kill()
    for pid in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    try:
        process.communicate(timeout=_DRAIN_S)
    except subprocess.TimeoutExpired:  # a pipe still held by something that escaped
        for pipe in (process.stdin, process.stdout, process.stderr):
            if pipe is not None:
                pipe.close()
        process.wait()


def interrupt_at(process: subprocess.Popen[AnyStr], marker: Path) -> AnyStr:
    """SIGINT `process` once `marker` exists; its stderr after it ended. Whatever happens
    (a failed assertion, pytest-timeout), its whole tree is ended before this returns."""
    try:
        while not marker.exists():
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate()
        return stderr
    finally:
        end_tree(process)


@contextlib.contextmanager
def python_sigint() -> Iterator[None]:
    """Within it, a SIGINT to this process is Python's KeyboardInterrupt (as at a terminal),
    even when the suite was started with SIGINT ignored; the previous handler after it."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
