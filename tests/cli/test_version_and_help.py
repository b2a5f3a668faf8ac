"""`meshcert --version` and `--help` answer without starting a worker process.

The probe runs `meshcert.cli.main()` in a fresh interpreter with `subprocess.Popen` and the
workers' prestart wrapped so that each call is appended to a file before it happens: the file
lists every worker the command started (none, for --help and --version)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from meshcert.core.version import __version__

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import subprocess, sys
import meshcert.certify.workers as workers
record = sys.argv.pop(1)
def note(what):
    with open(record, "a") as f:
        f.write(what + "\\n")
real_popen_init = subprocess.Popen.__init__
def popen_init(self, *args, **kwargs):
    note("popen")
    real_popen_init(self, *args, **kwargs)
subprocess.Popen.__init__ = popen_init
real_prestart = workers.prestart_workers
def prestart():
    note("prestart")
    real_prestart()
workers.prestart_workers = prestart
sys.argv[0] = "meshcert"
from meshcert.cli import main
main()
"""


def run_probe(tmp_path: Path, *argv: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    record = tmp_path / "started.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(record), *argv],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    started = record.read_text().split() if record.exists() else []
    return done, started


def test_version_prints_the_version(tmp_path: Path) -> None:
    done, started = run_probe(tmp_path, "--version")
    assert (done.returncode, done.stdout, started) == (0, f"meshcert {__version__}\n", [])


@pytest.mark.parametrize("argv", [["--help"], ["models", "certify", "--help"],
                                  ["models", "--help"], ["package", "job", "--help"]])
def test_help_starts_no_worker(tmp_path: Path, argv: list[str]) -> None:
    done, started = run_probe(tmp_path, *argv)
    assert done.returncode == 0 and "Usage:" in done.stdout
    assert started == []


def test_the_probe_sees_a_prestart(tmp_path: Path) -> None:
    """The control: `models certify` itself prestarts its workers before parsing options."""
    _done, started = run_probe(tmp_path, "models", "certify", str(tmp_path / "missing"))
    assert started[:1] == ["prestart"]
