"""One rule for a missing tool (issue 41): llama-cpp-python absent makes the check nobody asked
for (`llama_cpp_gguf`) `skipped`, "not available: ...", never passed; the work the user asked
for (`--materialize`) incomplete. (Absence is simulated the way tests/cli/test_demo.py does:
llama-cpp-python cannot be uninstalled for one test.)"""

from __future__ import annotations

import pytest

from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.verdict import verdict
from meshcert.certify.workers import llama_library
from tests.conftest import PackageFactory


def test_a_missing_tool_is_skipped_unless_asked_for(packages: PackageFactory,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path_factory: pytest.TempPathFactory
                                                    ) -> None:
    monkeypatch.setattr(llama_library, "package_dirs", lambda: [])  # as if not installed
    info = packages.build("llama")
    plain = certify_package(CertRequest(model=str(info.root)))
    runs = {c.name: c for c in plain.checks}
    assert runs["llama_cpp_gguf"].status == "skipped"
    assert (runs["llama_cpp_gguf"].details or "").startswith(
        "not available: llama-cpp-python is not installed")
    assert plain.status == "passed"
    assert plain.coverage is not None and plain.coverage.llama_cpp == "not_available"
    # and the verdict says so, as every format's headline does: passed, not fully
    said = verdict(plain)
    assert "llama.cpp not available" in said.coverage
    assert said.sentence().startswith("certification passed (llama.cpp not available): ")

    asked = certify_package(CertRequest(model=str(info.root), materialize=True,
                                        materialize_dir=str(tmp_path_factory.mktemp("stages"))))
    runs = {c.name: c for c in asked.checks}
    assert runs["llama_cpp_gguf"].status == "skipped"
    assert runs["stage_materialization"].status == "error"
    assert "check_not_run" in runs["stage_materialization"].codes
    assert asked.status == "incomplete"
