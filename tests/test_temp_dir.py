"""The suite's check for files left in the system temp dir (tests/conftest.py) fails a session
that leaves one, naming it, and passes one that cleans up: run on a two-test child session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFTEST = "from tests.conftest import (pytest_sessionfinish, pytest_sessionstart,  # noqa\n" \
           "                            pytest_terminal_summary)\n"
TESTS = '''
import os, tempfile

def test_a_report_file_left_behind():
    if os.environ.get("LEAK") == "1":
        tempfile.mkstemp(prefix="meshcert-report-", suffix=".json")

def test_a_file_removed_after_use():
    handle, path = tempfile.mkstemp(prefix="meshcert-generation-defaults-")
    os.close(handle)
    os.unlink(path)
'''


def _session(tmp_path: Path, leak: bool) -> subprocess.CompletedProcess[str]:
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_leaks.py").write_text(TESTS, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LEAK": "1" if leak else "0"}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), str(tmp_path / "test_leaks.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_session_that_leaves_a_temp_file_fails_and_names_it(tmp_path: Path) -> None:
    done = _session(tmp_path, leak=True)
    assert done.returncode == 1, done.stdout
    assert "files left in the system temp dir" in done.stdout
    left = [line for line in done.stdout.splitlines() if line.startswith("left behind: ")]
    assert len(left) == 1 and left[0].startswith("left behind: meshcert-report-"), done.stdout


def test_a_session_that_cleans_up_passes(tmp_path: Path) -> None:
    done = _session(tmp_path, leak=False)
    assert done.returncode == 0, done.stdout
    assert "left behind" not in done.stdout
