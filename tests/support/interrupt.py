"""Ctrl-C a child process once it says it is inside the work, never after a time.

The child writes `marker` when it has reached the part to interrupt; a loaded machine can slow
it, but cannot change which part the SIGINT lands in (pytest-timeout bounds a hang)."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path
from typing import AnyStr


def interrupt_at(process: subprocess.Popen[AnyStr], marker: Path) -> AnyStr:
    """SIGINT `process` once `marker` exists; its stderr after it ended (killed if need be)."""
    try:
        while not marker.exists():
            assert process.poll() is None, process.communicate()
            time.sleep(0.02)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate()
        return stderr
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
