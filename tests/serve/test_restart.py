"""`kill -9` or SIGTERM of `meshcert serve` in the middle of a certification, then a restart:
the accepted job is finished, once (one certification recorded, one attestation uploaded).
The service runs as a real subprocess; the Hub answers slowly so the kill lands mid-job."""

from __future__ import annotations

import signal
import threading
import time
from pathlib import Path

import pytest

from meshcert.attest.attestation_repo import attestation_path
from tests.support.catalog_packages import PackageShelf
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import ServeRig

REPO = "meshllm/tiny-layers"


def wait_running(rig: ServeRig, hub: FakeHub, timeout_s: float = 60.0) -> None:
    """Until the job runs and the certification has asked the Hub for the package."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        asked = any(REPO in r.path and "revision" in r.path for r in hub.requests("model_info"))
        if rig.status()["running"] and asked:
            return
        threading.Event().wait(0.05)
    raise TimeoutError("the job never started")


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_a_killed_service_finishes_the_job_once_after_a_restart(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf, tmp_path: Path,
        sig: signal.Signals) -> None:
    rig.write_config(watch=["meshllm/*-layers"], budgets={"drain_s": 0.0})
    log = tmp_path / "serve.log"
    first = rig.spawn(log)
    try:
        rig.hook()
        hub.latency_s = 0.4  # a far-away Hub: the certification takes seconds
        commit = hub.publish_dir(REPO, shelf.v2())
        wait_running(rig, hub)
        first.send_signal(sig)
        first.wait(30)
        assert rig.attestation_commits() == 1  # nothing uploaded yet
        hub.latency_s = 0.0
        second = rig.spawn(log)
        try:
            status = rig.settle()
        finally:
            second.terminate()
            second.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    text = log.read_text()
    assert status["counts"]["done"] == 1 and status["counts"]["certifications"] == 1
    assert rig.attestation_commits() == 2
    assert list(rig.attestation_files()) == [attestation_path(REPO, commit)]
    assert "task(s) left running by a stopped process are queued again" in text or \
        "requeued at shutdown" in text
    assert "Traceback" not in text
