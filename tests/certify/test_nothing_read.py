"""A check that read nothing is never `passed` (issue 45): every registered check, run on an
empty directory, a lone GGUF file, a directory of layers without its manifest and an
unreachable pinned Hub ref, is skipped (saying why) or failed/error, and the HTML shows no
green PASSED badge for any of them."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import NO_FILE_READ, NO_HEADER_READ
from meshcert.certify.inspect_file import inspect_gguf
from meshcert.certify.report import CertReport
from meshcert.certify.scope import ScopeRequest
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.reports.certification.html import render_cert_html
from tests.conftest import PackageFactory
from tests.core.hub.test_access import closed_port_url
from tests.reports.dom import parse
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub
from tests.support.splits import split_v2


def _empty_dir(tmp_path: Path, packages: PackageFactory) -> str:
    (tmp_path / "empty").mkdir()
    return str(tmp_path / "empty")


def _lone_gguf(tmp_path: Path, packages: PackageFactory) -> str:
    info = packages.build("llama")
    lone = tmp_path / "model.gguf"
    shutil.copy(info.root / "layers" / "layer-000.gguf", lone)
    return str(lone)


def _missing_manifest(tmp_path: Path, packages: PackageFactory) -> str:
    info = packages.build("llama")
    (info.root / "model-package.json").unlink()
    return str(info.root)


INPUTS: dict[str, Callable[[Path, PackageFactory], str]] = {
    "empty directory": _empty_dir, "lone gguf": _lone_gguf,
    "missing manifest": _missing_manifest}


def assert_nothing_passed(report: CertReport) -> None:
    ran = {c.name for c in report.checks}
    registered = {c.name for c in all_checks() if c.applies_to(report.package_format)}
    assert ran == registered  # every registered check was asked
    passed = [c.name for c in report.checks if c.status == "passed"]
    assert passed == [], passed
    for c in report.checks:
        if c.status == "skipped":
            assert c.details and c.findings == 0, c
    assert report.status != "passed"
    root = parse(render_cert_html(report))
    badges = [span.text() for row in root.find_all("tr") if row.attrs.get("data-check")
              for span in row.find_all("span") if "badge-passed" in span.classes]
    assert badges == []
    assert report.coverage is not None and report.coverage.digests.mode == "none"


@pytest.mark.parametrize("kind", list(INPUTS))
def test_a_check_that_read_nothing_is_not_passed(kind: str, tmp_path: Path,
                                                 packages: PackageFactory) -> None:
    model = INPUTS[kind](tmp_path, packages)
    assert_nothing_passed(certify_package(CertRequest(model=model)))


def test_an_unreachable_hub_ref_passes_no_check(hub: FakeHub,  # noqa: F811
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_ENDPOINT", closed_port_url())
    report = certify_package(CertRequest(model="hf://ns/pkg@" + "a" * 40))
    assert report.status == "incomplete"
    assert "hub_unreachable" in {f.code for f in report.findings}
    assert_nothing_passed(report)


# -- a package (or a file) whose every GGUF is unreadable ---------------------------------------
def _garbled(root: Path) -> None:
    """Every GGUF under root overwritten with zeros of its own size: no header parses."""
    for gguf in root.rglob("*.gguf"):
        gguf.write_bytes(bytes(gguf.stat().st_size))


def assert_no_header_check_passed(report: CertReport) -> None:
    by_name = {c.name: c for c in report.checks}
    readers = [c for c in all_checks() if c.reads_headers and c.name in by_name]
    assert len(readers) >= 8
    for check in readers:
        run = by_name[check.name]
        assert run.status != "passed", run
        if run.status == "skipped":
            assert run.details, run
    assert by_name["gguf_structure"].status == "failed"  # it says why nothing was read
    assert report.status == "failed"


@pytest.mark.parametrize("fmt", ["v1", "v2"])
def test_a_package_whose_every_gguf_is_unreadable_passes_no_header_check(
        fmt: str, tmp_path: Path, packages: PackageFactory) -> None:
    # the manifest was read, so its own checks may pass; the tokenizer, tensor ownership,
    # architecture... checks read no header, and said `passed`
    info = packages.build("llama")
    root = info.root
    if fmt == "v2":
        assert info.source_path is not None
        root = split_v2(info.source_path, tmp_path / "v2", model_id="test/llama:F32").root
    _garbled(root)
    report = certify_package(CertRequest(model=str(root)))
    assert report.package_format == fmt
    assert_no_header_check_passed(report)
    skipped = {c.name: c.details for c in report.checks if c.status == "skipped"}
    assert skipped.get("tokenizer") == NO_HEADER_READ


def test_inspecting_a_file_that_is_no_gguf_passes_no_check(tmp_path: Path) -> None:
    text = tmp_path / "notes.gguf"
    text.write_text("hi\n")
    report = inspect_gguf(str(text))
    assert [c.name for c in report.checks if c.status == "passed"] == []
    assert {f.code for f in report.findings} >= {"gguf_bad_magic"}
    assert report.status == "failed"


def test_a_slice_that_selects_no_artifact_passes_no_file_check(packages: PackageFactory) -> None:
    # --layers 100..200 of a 4-layer package: no artifact file was looked at, and
    # artifact_files said `passed`
    info = packages.build("llama")
    report = certify_package(CertRequest(model=str(info.root), options=CertOptions(
        scope=ScopeRequest(layer_start=100, layer_end=200))))
    assert report.status == "failed"
    by_name = {c.name: c for c in report.checks}
    assert by_name["scope"].status == "failed"
    assert (by_name["artifact_files"].status, by_name["artifact_files"].details) == (
        "skipped", NO_FILE_READ)
    readers = [c.name for c in all_checks() if c.reads_headers or c.reads_artifact_files]
    assert [n for n in readers if n in by_name and by_name[n].status == "passed"] == []
