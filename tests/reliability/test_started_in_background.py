"""The suite passes however it is started: from a background job of a non-interactive shell
(`nohup`, `cmd &` in a script, many CI runners) SIGINT is inherited as ignored, and the Ctrl-C
tests once waited on a child that ignored the interrupt (one hung 8.5 minutes on an orphaned
`sleep 3600` holding its pipe). Here each Ctrl-C test runs in a child pytest started that way:
it passes, the child pytest ends by itself, and no process it started outlives it.

Every process of a child run carries one tagged environment variable (children inherit it), so
anything left after the run is found in /proc whatever session or group it moved to.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.support.interrupt import end_tree

# what a child run left is found in /proc (Linux, where CI runs)
pytestmark = pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="needs /proc")
ROOT = Path(__file__).resolve().parents[2]
TAG = "MESHCERT_TEST_TREE_TAG"
# The suite's Ctrl-C tests: each interrupts a real process (a child, or this process itself).
CTRL_C_TESTS = (
    "tests/cli/test_cli_package.py::"
    "test_ctrl_c_exits_130_without_a_manifest_and_resume_finishes",
    "tests/reliability/test_containment.py::"
    "test_ctrl_c_while_hashing_writes_a_partial_incomplete_report",
    "tests/evidence/test_run.py::test_ctrl_c_stops_the_run_and_the_rest_are_recorded_as_not_run",
)
# Each child pytest's per-test bound (the tests take seconds) and the bound on the whole child
# run beyond which it counts as hung.
INNER_TIMEOUT_S = 120
RUN_BOUND_S = 3 * INNER_TIMEOUT_S


def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _tagged(tag: str) -> list[str]:
    """Every live process whose environment carries the tag: 'pid cmdline'."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                if f"{TAG}={tag}".encode() not in handle.read().split(b"\0"):
                    continue
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                command = handle.read().replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{entry} {command}")
        except OSError:  # ended while we looked, or not ours to read
            continue
    return found


def _run_in_background(args: list[str], cwd: Path) -> tuple[int | None, str, list[str]]:
    """A child pytest as a background job starts it: SIGINT ignored, its own session. Returns
    its exit status (None: still running past RUN_BOUND_S, then ended), its output and what
    of it was left running afterwards (ended too, so a failure here leaves nothing either)."""
    tag = uuid.uuid4().hex
    env = {**os.environ, TAG: tag, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:randomly",
         f"--timeout={INNER_TIMEOUT_S}", *args],
        cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, preexec_fn=_ignore_sigint, start_new_session=True)
    try:
        output, _ = child.communicate(timeout=RUN_BOUND_S)
        status: int | None = child.returncode
    except subprocess.TimeoutExpired:
        status, output = None, ""
    finally:
        if child.returncode is None:
            end_tree(child)
    left = _tagged(tag)
    for line in left:
        os.kill(int(line.split()[0]), signal.SIGKILL)
    return status, output, left


@pytest.mark.timeout(4 * RUN_BOUND_S)
def test_the_ctrl_c_tests_pass_when_the_suite_starts_with_sigint_ignored() -> None:
    status, output, left = _run_in_background(list(CTRL_C_TESTS), ROOT)
    assert status is not None, f"the child pytest was still running after {RUN_BOUND_S} s"
    assert status == 0, output
    assert f"{len(CTRL_C_TESTS)} passed" in output, output
    assert left == [], left


HANGING_TEST = '''
import subprocess, sys
from pathlib import Path
from tests.support.interrupt import interrupt_at, start_interruptible

def test_a_child_that_never_takes_the_interrupt(tmp_path: Path) -> None:
    # it ignores SIGINT itself and starts a hook in a session of its own that holds its
    # pipes: what used to hang the suite; pytest-timeout must end it, and the tree with it
    marker = tmp_path / "inside"
    script = f"trap '' INT; setsid sleep 3600 & touch {marker}; exec sleep 3600"
    process = start_interruptible(["sh", "-c", script], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE)
    interrupt_at(process, marker)
'''


@pytest.mark.timeout(4 * RUN_BOUND_S)
def test_a_ctrl_c_test_whose_child_ignores_it_times_out_and_leaves_nothing(
        tmp_path: Path) -> None:
    """The bound behind the tests above: if an interrupt is never taken, pytest-timeout fails
    the test (it does not hang the suite) and the whole tree it started is ended."""
    (tmp_path / "test_hang.py").write_text(HANGING_TEST, encoding="utf-8")
    status, output, left = _run_in_background(
        ["--timeout=5", "--rootdir", str(tmp_path), str(tmp_path / "test_hang.py")], tmp_path)
    assert status == 1, output
    assert "Timeout" in output and "1 failed" in output, output
    assert left == [], left


def test_every_ctrl_c_test_of_the_suite_is_run_here() -> None:
    """A new test that interrupts a real process is listed above, so it is proven too."""
    files = {node.split("::")[0] for node in CTRL_C_TESTS}
    users = set()
    for path in (ROOT / "tests").rglob("test_*.py"):
        text = path.read_text(encoding="utf-8")
        if "interrupt_at(" in text or "python_sigint(" in text:
            users.add(str(path.relative_to(ROOT)))
    users.discard(str(Path(__file__).relative_to(ROOT)))
    assert users <= files, sorted(users - files)
