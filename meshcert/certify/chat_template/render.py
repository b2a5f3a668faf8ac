"""Render a template inside jinja2's sandbox, in a separate process, under time/size limits.

Why a subprocess and not a thread with a tracing budget: jinja2's sandbox stops attribute
walks, but not a single C-level call that allocates or loops for long (``'x'|center(10**9)``,
``'%*s' % (10**9, '')``, a huge ``join``). A thread can be neither interrupted inside such a
call nor kept from exhausting the certifier's memory. A child interpreter can: it caps its own
address space and CPU time (RLIMIT_AS, RLIMIT_CPU) and the parent kills it after a wall-clock
timeout. The child runs ``python -I -S`` (no environment variables, no site, no current directory on
sys.path; only this checkout and the directories holding jinja2 and markupsafe on its path) with
an empty environment and ``/`` as working directory, so even a
sandbox escape would find no token in its environment. Cost: one interpreter start per
*distinct* template; a package repeating one template in 94 fragments renders it once.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meshcert.certify.chat_template.conversations import (
    CONVERSATIONS,
    Conversation,
    is_about_tools,
)
from meshcert.certify.processes.spare import SpareProcess

ROOT = Path(__file__).resolve().parents[3]  # the directory holding the `meshcert` package
# The worker lowers its own priority first: it boots while the certifier is still starting, and
# on a 2-core machine three busy processes would slow the certifier, which it then waits for.
_BOOT = ("import os, sys; os.nice(10); sys.path[:0] = sys.argv[1:]; "
         "from meshcert.certify.chat_template.worker import main; main()")
_WORKER_IMPORTS = ("jinja2", "markupsafe")  # all the worker imports from outside the stdlib


def _import_roots() -> list[str]:
    """This checkout, then the directories jinja2 and markupsafe are installed in (found
    without importing them). Passing them beats `site`: processing site-packages (.pth files,
    an editable install's finder) is most of an interpreter's start-up."""
    roots = [str(ROOT)]
    for name in _WORKER_IMPORTS:
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            parent = str(Path(location).parent)
            if parent not in roots:
                roots.append(parent)
    return roots


def worker_argv() -> tuple[str, ...]:
    return (sys.executable, "-I", "-S", "-c", _BOOT, *_import_roots())


# the worker imports jinja2 before it reads its request, so a prestarted one is warm
SPARE_WORKER = SpareProcess(worker_argv, env={}, cwd="/")


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
    reply = exchange(worker_request(template, limits, conversations), limits)
    return RenderOutcome(failure=reply) if isinstance(reply, str) else outcome_from_reply(reply)


def worker_request(template: str, limits: RenderLimits,
                   conversations: tuple[Conversation, ...]) -> dict[str, Any]:
    """The worker's request (see meshcert.certify.chat_template.worker for the protocol)."""
    about_tools = is_about_tools(template)
    return {
        "template": template,
        "conversations": [{"name": c.name, "contexts": c.contexts(about_tools)}
                          for c in conversations],
        "max_output": limits.max_output_chars,
        "memory_bytes": limits.memory_bytes,
        "cpu_seconds": max(1, int(limits.timeout_seconds) + 1),
    }


def exchange(request: dict[str, Any], limits: RenderLimits) -> dict[str, Any] | str:
    """Send `request` to a worker: its JSON reply, or why there is none (timeout, crash,
    unreadable reply), as text for a render-error message."""
    try:
        returncode, stdout, stderr = _run_worker(json.dumps(request).encode(),
                                                 limits.timeout_seconds)
    except subprocess.TimeoutExpired:
        return f"did not finish rendering within {limits.timeout_seconds:g} s"
    except OSError as exc:
        return f"the render worker could not start: {exc}"
    if returncode != 0:
        return _crash_reason(returncode, stderr)
    try:
        reply = json.loads(stdout.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        reply = None
    if not isinstance(reply, dict):
        return "the render worker sent an unreadable reply"
    return reply


def outcome_from_reply(reply: dict[str, Any]) -> RenderOutcome:
    """A render reply (``results`` or ``compile_error``) as an outcome to judge."""
    if reply.get("compile_error"):
        line = reply.get("line")
        return RenderOutcome(failure=f"does not compile: {reply['compile_error']}",
                             line=line if isinstance(line, int) else None)
    results = reply.get("results", [])
    return RenderOutcome(results=[r for r in results if isinstance(r, dict)]
                         if isinstance(results, list) else [])


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
