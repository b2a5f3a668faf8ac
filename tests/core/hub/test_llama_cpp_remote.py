"""llama.cpp's second opinion needs whole files: on an hf:// package the check is skipped,
saying why, never passed."""

from __future__ import annotations

from pathlib import Path

from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub


def test_a_remote_package_skips_llama_cpp_saying_why(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    sha = hub.publish_dir(REPO, info.root)
    report = certify_ref(f"hf://{REPO}@{sha}")
    [run] = [c for c in report.checks if c.name == "llama_cpp_gguf"]
    assert run.status == "skipped"
    assert run.details is not None and run.details.startswith("not applicable: the package "
                                                              "is remote")
    assert report.status == "passed"
    assert report.coverage is not None and report.coverage.llama_cpp == "not_available"
