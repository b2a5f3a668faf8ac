"""`--after-artifact-command CMD`: run after each artifact is written and verified.

As mesh-llm's write-package: the command runs through the shell with
`SKIPPY_PACKAGE_ARTIFACT_PATH` (absolute) and `SKIPPY_PACKAGE_ARTIFACT_RELATIVE_PATH` (in the
package) set; its output goes to stderr (stdout stays the caller's, e.g. for --json). A non-zero
exit aborts the write; so does a hook that changes (or removes) the file, seen as a different
(size, mtime, ctime, inode) after it ran, without reading the file again.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from meshcert.writer.artifact import Artifact
from meshcert.writer.errors import Aborted, Interrupted
from meshcert.writer.stream import Hook, signature

PATH_ENV = "SKIPPY_PACKAGE_ARTIFACT_PATH"
RELATIVE_ENV = "SKIPPY_PACKAGE_ARTIFACT_RELATIVE_PATH"


def _stderr_fd() -> int | None:
    try:
        return sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # a captured stderr has no descriptor
        return None


def _stop_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def after_artifact_hook(command: str, cancel: threading.Event) -> Hook:
    def run(artifact: Artifact, path: Path) -> None:
        env = dict(os.environ, **{PATH_ENV: str(path), RELATIVE_ENV: artifact.path})
        before = signature(path)
        out = _stderr_fd()
        # its own process group: on Ctrl-C the whole hook (the shell and what it started)
        # is stopped by the writer, not left running
        proc = subprocess.Popen(command, shell=True, env=env, stdin=subprocess.DEVNULL,
                                stdout=out if out is not None else subprocess.DEVNULL,
                                start_new_session=True)
        while True:
            try:
                status = proc.wait(timeout=0.1)
                break
            except subprocess.TimeoutExpired:
                if cancel.is_set():
                    _stop_group(proc)
                    raise Interrupted() from None
        if status != 0:
            raise Aborted("hook_failed", f"--after-artifact-command exited with status "
                          f"{status} after {artifact.path}; the write is aborted (no manifest)")
        try:
            after = signature(path)
        except FileNotFoundError:
            after = None
        if after != before:
            raise Aborted("hook_changed_artifact", f"--after-artifact-command changed "
                          f"{artifact.path} (it must leave the file as written); the write is "
                          "aborted (no manifest)")

    return run
