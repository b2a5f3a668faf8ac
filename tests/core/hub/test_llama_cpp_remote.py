"""llama.cpp's second opinion needs whole files: an hf:// package says it was not asked."""

from __future__ import annotations

from pathlib import Path

from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub


def test_a_remote_package_reports_llama_cpp_not_checked(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    sha = hub.publish_dir(REPO, info.root)
    report = certify_ref(f"hf://{REPO}@{sha}")
    [note] = [f for f in report.findings if f.code == "llama_cpp_gguf_not_checked"]
    assert note.severity == "info" and "remote" in note.message
    assert report.status == "passed"
