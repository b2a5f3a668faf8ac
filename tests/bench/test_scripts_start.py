"""Every bench script starts, as it is run (`python bench/<name>.py`, from anywhere): two of
them had stopped importing after code moved, and nothing noticed until they were rerun."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py"))


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_script_prints_its_help(script: str, tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, str(BENCH / script), "--help"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "usage" in done.stdout.lower()
