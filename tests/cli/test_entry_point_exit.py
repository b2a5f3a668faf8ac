"""The console entry point (meshcert.cli.main) ends through the interpreter's own exit, with its
garbage-collection passes skipped (gc.freeze): a script sees the exit status, every byte of
output, and the atexit hooks (here: the spare worker processes are cleaned up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def meshcert(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "meshcert", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from meshcert.testing import glm_dsa_spec, write_package

    work = tmp_path_factory.mktemp("fast-exit")
    return write_package(glm_dsa_spec(), work / "pkg", source_dir=work / "src").root


def test_a_passed_certification_exits_0_with_its_whole_json_on_a_pipe(package: Path) -> None:
    done = meshcert("models", "certify", str(package), "--package-only", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "passed"  # flushed to the last byte


def test_a_failed_certification_exits_1(package: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model-package.json").write_text("{not json")
    done = meshcert("models", "certify", str(broken), "--package-only")
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Skippy package certification: failed" in done.stdout


def test_a_usage_error_exits_2_with_its_message() -> None:
    done = meshcert("models", "certify")
    assert done.returncode == 2
    assert "Missing argument" in done.stderr


def test_the_atexit_hooks_still_run_before_the_process_ends() -> None:
    """A spare worker started and never used is killed by its atexit hook, not orphaned."""
    code = ("import atexit, sys, time\n"
            "sys.argv = ['meshcert', '--help']\n"
            "atexit.register(lambda: print('spare', sys.modules["
            "'meshcert.certify.chat_template.render'].SPARE_WORKER._spare, flush=True))"
            "  # runs last\n"
            "from meshcert.certify.workers import prestart_workers\n"
            "prestart_workers(); time.sleep(1.0)\n"
            "from meshcert.cli import main\nmain()")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "spare None" in done.stdout  # discarded by meshcert.certify.processes.spare's hook


def test_certify_help_through_the_entry_point_is_plain_help() -> None:
    """`models certify` starts its workers before typer parses; `--help` still just helps."""
    done = meshcert("models", "certify", "--help")
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout and "--package-only" in done.stdout
