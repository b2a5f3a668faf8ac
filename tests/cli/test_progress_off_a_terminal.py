"""Hashing a whole package says where it is on stderr when stderr is not a terminal (a CI
log), unless --quiet or --json; stdout stays the report alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from meshcert.testing import llama_spec, write_package

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_package(llama_spec(), tmp_path_factory.mktemp("p") / "pkg",
                         source_dir=None).root


def certify(package: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run([sys.executable, "-m", "meshcert", "models", "certify", str(package),
                           "--package-only", *flags], capture_output=True, text=True, env=env,
                          timeout=240, check=False)


def test_hashing_prints_phase_lines_on_a_piped_stderr(package: Path) -> None:
    done = certify(package)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0].startswith("sha256") and "started" in lines[0], lines
    assert any(line.startswith("sha256") and ": done, " in line for line in lines), lines
    assert "\r" not in done.stderr and "\x1b[" not in done.stderr  # plain lines, no bar


@pytest.mark.parametrize("flag", ["--quiet", "--json"])
def test_quiet_and_json_print_no_progress(package: Path, flag: str) -> None:
    done = certify(package, flag)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    if flag == "--json":
        assert json.loads(done.stdout)["status"] == "passed"
    else:
        assert done.stdout == ""
