"""Run one process and keep what it printed: stdout, stderr, and both merged in arrival order.

The merged stream is what a terminal (or `2>&1 | tee run.log`) shows: llama.cpp's console logs
interleave the two (the fork's `ggml_test:` lines sit between a row's name and its numbers).
Machine formats (`llama-bench -o json`) need stdout alone. Keeping all three lets the caller
choose after the fact.

`Executor` is the seam: the runner only calls `execute`, so tests can hand in another one for
faults a real process cannot produce. Ctrl-C while a process runs stops it (its whole process
group) and comes back as status `interrupted`, never as an exception.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import IO, Literal, Protocol

Status = Literal["ok", "failed", "timeout", "interrupted", "error"]
_CHUNK = 1 << 16
_GRACE_S = 5.0


@dataclass(frozen=True)
class Execution:
    started: str  # UTC, ISO 8601
    duration_s: float
    status: Status
    exit_status: int | None  # None: never started, or stopped before it exited by itself
    stdout: bytes = b""
    stderr: bytes = b""
    merged: bytes = b""
    error: str | None = None  # why it failed to start, or how it was stopped


class Executor(Protocol):
    def execute(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None,
                timeout_s: float | None) -> Execution: ...


def _utc_now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class _Capture:
    """Reads a pipe in a thread into its own buffer and the shared merged one."""

    def __init__(self, pipe: IO[bytes], merged: list[bytes], lock: threading.Lock) -> None:
        self.chunks: list[bytes] = []
        self._pipe, self._merged, self._lock = pipe, merged, lock
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        fd = self._pipe.fileno()
        while chunk := os.read(fd, _CHUNK):
            with self._lock:
                self.chunks.append(chunk)
                self._merged.append(chunk)
        self._pipe.close()

    def data(self) -> bytes:
        return b"".join(self.chunks)


class SubprocessExecutor:
    """The real one: `subprocess.Popen` in its own session (so a terminal's Ctrl-C reaches us,
    and we stop the fixture and anything it started)."""

    def execute(self, argv: Sequence[str], env: Mapping[str, str], cwd: str | None,
                timeout_s: float | None) -> Execution:
        started, t0 = _utc_now(), time.monotonic()
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, env=dict(env), cwd=cwd,
                                    start_new_session=True)
        except OSError as exc:
            return Execution(started, round(time.monotonic() - t0, 6), "error", None,
                             error=f"cannot start {argv[0]!r}: {exc.strerror or exc}")
        merged: list[bytes] = []
        lock = threading.Lock()
        assert proc.stdout is not None and proc.stderr is not None
        out, err = _Capture(proc.stdout, merged, lock), _Capture(proc.stderr, merged, lock)
        status: Status
        note: str | None = None
        try:
            code: int | None = proc.wait(timeout=timeout_s)
            status = "ok" if code == 0 else "failed"
            if code is not None and code < 0:
                note = f"killed by signal {signal.Signals(-code).name}"
        except subprocess.TimeoutExpired:
            _stop(proc)
            code, status, note = None, "timeout", f"stopped after the {timeout_s:g}s timeout"
        except KeyboardInterrupt:
            _stop(proc)
            code, status, note = None, "interrupted", "interrupted (Ctrl-C); process stopped"
        except BaseException:  # anything else ending the wait (SystemExit, a caller's alarm)
            _stop(proc)  # never leaves the fixture and what it started running
            raise
        _drain(proc, (out, err))
        with lock:
            both = b"".join(merged)
        return Execution(started, round(time.monotonic() - t0, 6), status, code, out.data(),
                         err.data(), both, note)


def _drain(proc: subprocess.Popen[bytes], captures: Sequence[_Capture]) -> None:
    """Wait for both pipes to close; a leftover child of the fixture holding them open is
    killed with the rest of the process group."""
    for capture in captures:
        capture.thread.join(_GRACE_S)
    if any(c.thread.is_alive() for c in captures):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        for capture in captures:
            capture.thread.join()


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process group, SIGKILL it if still there after a grace period."""
    for sig, wait_s in ((signal.SIGTERM, _GRACE_S), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue
