"""The inspect service: which checks run on a bare GGUF, and that none of them needs a manifest."""

from __future__ import annotations

from pathlib import Path

from meshcert.certify.checks import all_checks
from meshcert.certify.inspect_file import PACKAGE_CHECKS, inspect_checks, inspect_gguf, split_set
from tests.core.gguf.hostile import base_file


def test_the_excluded_checks_exist_and_the_gguf_ones_run() -> None:
    names = {c.name for c in all_checks()}
    assert names >= PACKAGE_CHECKS  # a renamed check would otherwise slip into inspect
    running = {c.name for c in inspect_checks()}
    assert {"gguf_structure", "llama_cpp_gguf"} <= running
    assert not running & PACKAGE_CHECKS


def test_no_check_that_runs_asks_for_a_manifest(tmp_path: Path) -> None:
    path = base_file().write(tmp_path / "m.gguf")
    report = inspect_gguf(str(path))
    assert all(run.status != "error" for run in report.checks), report.checks
    assert {f.code for f in report.findings} == set()
    assert report.package_gate.status == "passed"


def test_an_unreadable_file_is_incomplete_not_passed(tmp_path: Path) -> None:
    report = inspect_gguf(str(tmp_path / "gone.gguf"))
    assert report.status == "incomplete"
    assert "check_not_run" in {f.code for f in report.findings}


def test_split_set_names(tmp_path: Path) -> None:
    assert split_set(str(tmp_path / "a.gguf")) == ([str(tmp_path / "a.gguf")], [])
    files, problems = split_set(str(tmp_path / "a-00001-of-00002.gguf"))
    assert files == [] and [p.path for p in problems] == [
        str(tmp_path / "a-00001-of-00002.gguf"), str(tmp_path / "a-00002-of-00002.gguf")]
