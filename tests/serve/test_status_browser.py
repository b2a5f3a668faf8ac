"""The status page in real headless Chromium (slow tier): served live by the service, it
renders its sections and the last verdict, with no script."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.reports.browser import FLAGS, TIMEOUT_S, chromium_or_skip
from tests.reports.dom import parse
from tests.support.catalog_packages import PackageShelf
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import BOT_TOKEN, ServeRig

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def test_the_status_page_renders_in_chromium(rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
                                             tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    binary = chromium_or_skip()
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    rig.write_config(watch=["meshllm/*-layers"])
    with rig.running():
        rig.hook()
        commit = hub.publish_dir("meshllm/tiny-layers", shelf.v2())
        rig.settle()
        done = subprocess.run([binary, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                               "--dump-dom", f"{rig.url}/status"], capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    page = parse(done.stdout)
    assert [h.text() for h in page.find_all("h2")] == [
        "Queue", "Running", "Pending", "Last verdicts", "Failures", "Release matrix"]
    verdict = page.find("span", cls="passed")
    assert verdict.text().startswith("certification passed (digests: Hub-attested")
    assert commit in page.text()
    assert page.find_all("script") == []
