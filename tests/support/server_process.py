"""Start-up and shut-down of a real server process under test (llama.cpp's llama-server,
llama-cpp-python's server): wait until it answers, stop it for sure."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import httpx
import pytest


def log_tail(path: Path, limit: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-limit:]
    except OSError:
        return "(no log)"


def wait_until_ready(url: str, process: subprocess.Popen[bytes], log: Path, *, name: str,
                     timeout_s: float, poll_s: float = 0.25) -> None:
    """Poll `url` until it answers 200; fail the test (with the log's tail) when the process
    exits first or `timeout_s` passes."""
    ends = time.monotonic() + timeout_s
    last = "no attempt"
    while time.monotonic() < ends:
        code = process.poll()
        if code is not None:
            pytest.fail(f"{name} exited with {code} before it was ready:\n{log_tail(log)}",
                        pytrace=False)
        try:
            answer = httpx.get(url, timeout=2.0)
            if answer.status_code == 200:
                return
            last = f"HTTP {answer.status_code}"
        except httpx.HTTPError as exc:
            last = f"{type(exc).__name__}: {exc}"
        time.sleep(poll_s)
    pytest.fail(f"{name} not ready within {timeout_s:g} s ({last}):\n{log_tail(log)}",
                pytrace=False)


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=15)
