"""Render a template inside jinja2's sandbox, in a separate process, under time/size limits.

Why a subprocess and not a thread with a tracing budget: jinja2's sandbox stops attribute
walks, but not a single C-level call that allocates or loops for long (``'x'|center(10**9)``,
``'%*s' % (10**9, '')``, a huge ``join``). A thread can be neither interrupted inside such a
call nor kept from exhausting the certifier's memory. A child interpreter can: it caps its own
address space and CPU time (RLIMIT_AS, RLIMIT_CPU) and the parent kills it after a wall-clock
timeout. The child runs ``python -I`` (no environment variables, no user site, no current
directory on sys.path) with an empty environment and ``/`` as working directory, so even a
sandbox escape would find no token in its environment. Cost: one interpreter start per
*distinct* template; a package repeating one template in 94 fragments renders it once.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from certify.chat_template.conversations import CONVERSATIONS, Conversation
from certify.spare_process import SpareProcess

ROOT = Path(__file__).resolve().parents[2]  # the directory holding the `certify` package
_BOOT = ("import sys; sys.path.insert(0, sys.argv[1]); "
         "from certify.chat_template.worker import main; main()")
WORKER_ARGV = (sys.executable, "-I", "-c", _BOOT, str(ROOT))
# the worker imports jinja2 before it reads its request, so a prestarted one is warm
SPARE_WORKER = SpareProcess(lambda: WORKER_ARGV, env={}, cwd="/")


@dataclass(frozen=True)
class RenderLimits:
    timeout_seconds: float = 10.0  # wall clock for all conversations of one template
    max_output_chars: int = 256 * 1024  # per rendered conversation
    memory_bytes: int = 1 << 30  # the worker's address space


DEFAULT_RENDER_LIMITS = RenderLimits()


@dataclass
class RenderOutcome:
    """What the worker reported: per-conversation results, or why there are none."""

    results: list[dict[str, Any]] = field(default_factory=list)
    failure: str | None = None  # timeout, crash, unreadable reply, compile error
    line: int | None = None


def render_in_sandbox(template: str, limits: RenderLimits = DEFAULT_RENDER_LIMITS,
                      conversations: tuple[Conversation, ...] = CONVERSATIONS) -> RenderOutcome:
    """Render `template` with every conversation in the sandboxed worker process."""
    request = {
        "template": template,
        "conversations": [{"name": c.name, "context": c.context()} for c in conversations],
        "max_output": limits.max_output_chars,
        "memory_bytes": limits.memory_bytes,
        "cpu_seconds": max(1, int(limits.timeout_seconds) + 1),
    }
    try:
        returncode, stdout, stderr = _run_worker(json.dumps(request).encode(),
                                                 limits.timeout_seconds)
    except subprocess.TimeoutExpired:
        return RenderOutcome(failure=f"did not finish rendering within "
                             f"{limits.timeout_seconds:g} s")
    except OSError as exc:
        return RenderOutcome(failure=f"the render worker could not start: {exc}")
    if returncode != 0:
        return RenderOutcome(failure=_crash_reason(returncode, stderr))
    try:
        reply = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        return RenderOutcome(failure="the render worker sent an unreadable reply")
    if reply.get("compile_error"):
        return RenderOutcome(failure=f"does not compile: {reply['compile_error']}",
                             line=reply.get("line"))
    return RenderOutcome(results=list(reply.get("results", [])))


def _run_worker(request: bytes, timeout: float) -> tuple[int, bytes, bytes]:
    """Run the worker; past `timeout` seconds a timer kills it (TimeoutExpired).

    A timer thread rather than ``communicate(timeout=...)``, whose wait polls with
    ``time.sleep``: the certifier's callers may patch or account for sleeps (the Hub client's
    backoff does), and a kill needs no polling.
    """
    proc = SPARE_WORKER.take() or SPARE_WORKER.spawn()
    assert proc is not None
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        stdout, stderr = proc.communicate(request)
    finally:
        timer.cancel()
    if killed.is_set():
        raise subprocess.TimeoutExpired(proc.args, timeout)
    return proc.returncode, stdout, stderr


def _crash_reason(returncode: int, stderr: bytes) -> str:
    tail = stderr.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
    if returncode < 0:
        return f"the render was killed by signal {-returncode} (a CPU or memory limit)"
    if "MemoryError" in tail[0]:
        return "the render ran out of memory (the worker's address-space limit)"
    return f"the render worker failed (exit {returncode}): {tail[0][:200]}"
