"""Greedy runs of a model under llama.cpp, in a worker process that may die.

`greedy_runs(path, prompts, tokens)` starts `llama_decode_worker.py`, hands it the request and
follows its JSON lines (progress per generated token) until it is done, under one wall clock.
Results come back as `Run`s (logits loaded from the .npy files the worker wrote). A worker that
is killed by a signal, exits without finishing, or outlives the wall clock raises
`LlamaCppCrashed` (how it died, the model, the tail of its stderr); llama.cpp refusing the model
with a Python error raises `LlamaCppError`; a missing llama-cpp-python raises
`LlamaParserUnavailable`. Nothing here imports llama_cpp.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np

from meshcert.certify.processes.death import WorkerDeath, stderr_tail
from meshcert.certify.workers.llama_gguf import parse_json_line
from meshcert.certify.workers.llama_reopen import LlamaCppCrashed, LlamaParserUnavailable
from meshcert.core.errors import MeshcertError

WORKER_SCRIPT = Path(__file__).with_name("llama_decode_worker.py")
DEFAULT_TIMEOUT_S = 600.0  # a 8 GiB model loads and decodes 3 x 16 tokens well inside it
N_CTX = 256
N_THREADS = 2
SEED = 1234
_STDERR_KEEP = 64 << 10


class LlamaCppError(MeshcertError, ValueError):
    """llama.cpp refused the model (a Python-level error in the worker, e.g. a load failure)."""


@dataclass(frozen=True)
class Run:
    prompt_tokens: list[int]
    tokens: list[int]
    logits: list[np.ndarray[Any, Any]]  # one row per generated position


def worker_argv() -> list[str]:
    return [sys.executable, str(WORKER_SCRIPT)]


def greedy_runs(path: str, prompts: list[str], n_tokens: int, *, label: str = "model",
                timeout_s: float = DEFAULT_TIMEOUT_S,
                advance: Callable[[int], None] | None = None) -> list[Run]:
    """Greedy continuations and per-position logits of `path` under llama.cpp (CPU)."""
    work = tempfile.mkdtemp(prefix="meshcert-decode-")
    try:
        request = {"model": path, "prompts": prompts, "tokens": n_tokens, "n_ctx": N_CTX,
                   "n_threads": N_THREADS, "seed": SEED, "out": work}
        items = _follow(request, f"llama.cpp decode ({label})", path, timeout_s,
                        advance or (lambda _n: None))
        runs: dict[int, Run] = {}
        for item in items:
            if "run" in item:
                logits = np.load(item["logits"])
                runs[int(item["run"])] = Run(list(item["prompt_tokens"]), list(item["tokens"]),
                                             list(logits))
        if sorted(runs) != list(range(len(prompts))):
            raise LlamaCppError(f"the decode worker returned runs {sorted(runs)} for "
                                  f"{len(prompts)} prompt(s)")
        return [runs[i] for i in range(len(prompts))]
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _follow(request: dict[str, Any], what: str, model: str, timeout_s: float,
            advance: Callable[[int], None]) -> list[dict[str, Any]]:
    """Run the worker to its end; every JSON line it wrote (progress forwarded)."""
    try:
        proc = subprocess.Popen(worker_argv(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        raise LlamaParserUnavailable(f"cannot start the llama.cpp decode worker: "
                                     f"{exc.strerror or exc}") from exc
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    lines: queue.Queue[str | None] = queue.Queue()
    errors: list[bytes] = []
    readers = [threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True),
               threading.Thread(target=_read_tail, args=(proc.stderr, errors), daemon=True)]
    for reader in readers:
        reader.start()
    try:
        proc.stdin.write(json.dumps(request).encode())
        proc.stdin.close()
    except OSError:
        pass  # it died before reading: its exit status says how
    deadline = time.monotonic() + timeout_s
    items: list[dict[str, Any]] = []
    timed_out = False
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
        try:
            line = lines.get(timeout=min(left, 1.0))
        except queue.Empty:
            continue
        if line is None:  # stdout closed: the worker is ending
            break
        item = parse_json_line(line)
        if item is None:
            continue
        if "advance" in item:
            advance(int(item["advance"]))
        else:
            items.append(item)
    if timed_out:
        _kill(proc)
    try:
        returncode = proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        _kill(proc)
        returncode = proc.wait()
    for reader in readers:
        reader.join(timeout=5)
    stderr = stderr_tail(b"".join(errors).decode(errors="replace"))
    if timed_out:
        raise LlamaCppCrashed(WorkerDeath(what, model, None, stderr, timeout_s=timeout_s))
    unavailable = next((i["unavailable"] for i in items if "unavailable" in i), None)
    if unavailable is not None:
        raise LlamaParserUnavailable(str(unavailable))
    error = next((i for i in items if "error" in i), None)
    if error is not None and returncode == 0:
        raise LlamaCppError(f"{error['error']}: {error.get('message', '')}")
    finished = sum(1 for i in items if "run" in i) == len(request["prompts"])
    if returncode != 0 or not finished:
        raise LlamaCppCrashed(WorkerDeath(what, model, returncode, stderr))
    return items


def _read_lines(stream: IO[bytes], out: queue.Queue[str | None]) -> None:
    try:
        for raw in stream:
            out.put(raw.decode(errors="replace"))
    finally:
        out.put(None)


def _read_tail(stream: IO[bytes], out: list[bytes]) -> None:
    """Keep only the last _STDERR_KEEP bytes (llama.cpp can be chatty)."""
    kept = 0
    for chunk in iter(lambda: stream.read(8192), b""):
        out.append(chunk)
        kept += len(chunk)
        while kept > _STDERR_KEEP and len(out) > 1:
            kept -= len(out.pop(0))


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """The worker and anything it started (its own session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
