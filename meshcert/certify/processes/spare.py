"""A worker process started ahead of need, so its interpreter start overlaps other work.

The chat-template renderer and llama.cpp's GGUF parser each run in a child process (see
meshcert/certify/chat_template/render.py and meshcert/certify/workers/llama_gguf.py for why).
Starting an
interpreter and importing jinja2 or loading libggml costs 40-80 ms of wall time that a
certification would otherwise spend waiting; `certify_package` calls `prestart()` first, so the
children boot on the other core while the manifest is read and the files are hashed, then
block on stdin until a request comes. `take()` hands over the waiting child (or None, and the
caller spawns one as before), so the result is the same either way: only the wait moves.

A spare never taken is killed at exit (it would also exit on its own when its stdin closes).
"""

from __future__ import annotations

import atexit
import subprocess
import threading
from collections.abc import Callable, Sequence


class SpareProcess:
    """At most one idle child of `argv()`, spawned in the background by `start()`."""

    def __init__(self, argv: Callable[[], Sequence[str] | None],
                 env: dict[str, str] | None = None, cwd: str | None = None) -> None:
        self._argv = argv
        self._env = env
        self._cwd = cwd
        self._lock = threading.Lock()
        self._spare: subprocess.Popen[bytes] | None = None
        self._starting = False  # a start() is spawning: a second one would spawn twice
        _ALL.append(self)

    def spawn(self) -> subprocess.Popen[bytes] | None:
        argv = self._argv()
        if argv is None:
            return None
        return subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self._env, cwd=self._cwd)

    def start(self) -> None:
        """Spawn the spare in a background thread (never raises; a failure just means the
        caller spawns its own child later)."""
        def run() -> None:
            try:
                proc = self.spawn()
            except OSError:
                proc = None
            with self._lock:
                self._starting = False
                if self._spare is None:
                    self._spare = proc
                    return
            _discard(proc)

        with self._lock:
            if self._spare is not None or self._starting:
                return
            self._starting = True
        threading.Thread(target=run, name="spare-process", daemon=True).start()

    def take(self) -> subprocess.Popen[bytes] | None:
        """The waiting child, if one is alive; the caller owns it from here."""
        with self._lock:
            proc, self._spare = self._spare, None
        if proc is not None and proc.poll() is not None:
            _discard(proc)
            return None
        return proc

    def discard(self) -> None:
        with self._lock:
            proc, self._spare = self._spare, None
        _discard(proc)


def _discard(proc: subprocess.Popen[bytes] | None) -> None:
    if proc is None:
        return
    try:
        proc.kill()
        proc.communicate(timeout=5)
    except (OSError, subprocess.TimeoutExpired, ValueError):
        pass


_ALL: list[SpareProcess] = []


@atexit.register
def _discard_all() -> None:
    for spare in _ALL:
        spare.discard()
