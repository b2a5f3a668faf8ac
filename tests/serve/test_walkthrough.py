"""docs/serve.md's walk-through, run as written (bash, the `hf` and `meshcert` commands, the
in-repo Hub and the service as processes), on free ports instead of 8765 and 8080."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from tests.support.serve_rig import ROOT, free_port

pytestmark = pytest.mark.slow


def walkthrough() -> str:
    text = (ROOT / "docs" / "serve.md").read_text(encoding="utf-8")
    section = text.split("## Walk-through on one machine", 1)[1]
    return section.split("```bash\n", 1)[1].split("\n```", 1)[0]


def test_the_walkthrough_runs_as_written(tmp_path: Path) -> None:
    if shutil.which("hf") is None or shutil.which("meshcert") is None:
        pytest.skip("the walk-through needs the `hf` and `meshcert` commands on PATH")
    hub, service = free_port(), free_port()
    script = walkthrough().replace("~/meshcert", str(ROOT))
    script = script.replace("8765", str(hub)).replace("8080", str(service))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env |= {"HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    process = subprocess.Popen(["bash", "-e", "-c", "set -m\n" + script], cwd=tmp_path,
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
    assert process.returncode == 0, output[-4000:]
    assert re.search(r"^VALID: hf://meshllm/demo-layers: PASSED by ed25519:[0-9a-f]{64}",
                     output, re.MULTILINE), output[-4000:]
    assert "catalog pull request #1: 1 of 1 package(s) passed, 1 not certified" in output
    assert "not certified: pins no revision ('main')" in output
    assert "Traceback" not in (tmp_path / "serve.log").read_text()
