"""The script a job runs leaves nothing in the temp dir, however it ends: its report file, its
work directory and its generation-defaults file go with it (a shared host's or a local runner's
/tmp once collected one `meshcert-report-<pid>.json` per job), and its exit status is
meshcert's. Run here with `sh` and a stand-in `python` on PATH that plays pip and meshcert."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from meshcert.hubjobs.commands import (
    EMIT_FAILED,
    GENERATION_DEFAULTS,
    GENERATION_DEFAULTS_ENV,
    INSTALL_FAILED,
    WORK,
    job_script,
)

# `python -m pip ...` succeeds; `python -m meshcert <cmd> ... <report>` writes the report, a
# file in every directory argument that exists (the work dir) and exits $MESHCERT_STATUS;
# `report emit` prints the report and exits $EMIT_STATUS.
STAND_IN = """#!/bin/sh
[ "$2" = pip ] && exit "${PIP_STATUS:-0}"
if [ "$3" = report ]; then cat "$5"; echo; exit "${EMIT_STATUS:-0}"; fi
for arg in "$@"; do last="$arg"; done
mkdir -p "$TMPDIR/meshcert-work-$PPID" && echo scratch > "$TMPDIR/meshcert-work-$PPID/a"
echo '{"status": "passed"}' > "$last"
exit "${MESHCERT_STATUS:-0}"
"""


def _run(tmp_path: Path, args: list[str], **env: str) -> tuple[int, str, list[str]]:
    bin_dir, temp = tmp_path / "bin", tmp_path / "temp"
    bin_dir.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    stand_in = bin_dir / "python"
    stand_in.write_text(STAND_IN)
    stand_in.chmod(0o755)
    full_env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "TMPDIR": str(temp),
                GENERATION_DEFAULTS_ENV: '{"temperature": 0.6}', **env}
    done = subprocess.run(job_script("meshcert", [*args, "--report-out"], "tag"), env=full_env,
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout, sorted(os.listdir(temp))


@pytest.mark.parametrize(("env", "status"), [
    ({}, 0),
    ({"MESHCERT_STATUS": "1"}, 1),
    ({"MESHCERT_STATUS": "3"}, 3),
    ({"EMIT_STATUS": "1"}, EMIT_FAILED),
    ({"PIP_STATUS": "1"}, INSTALL_FAILED),
])
def test_the_job_script_keeps_its_status_and_leaves_no_file(
        tmp_path: Path, env: dict[str, str], status: int) -> None:
    code, out, left = _run(tmp_path, ["package", "write", "/source/m.gguf", "--out-dir", WORK,
                                      "--generation-defaults", GENERATION_DEFAULTS], **env)
    assert code == status
    assert left == []
    if status in (0, 1, 3):
        assert '"status": "passed"' in out  # the report came back through the logs first


def test_the_job_script_without_generation_defaults_leaves_no_file(tmp_path: Path) -> None:
    code, _, left = _run(tmp_path, ["models", "certify", "/package", "--package-only"])
    assert (code, left) == (0, [])
