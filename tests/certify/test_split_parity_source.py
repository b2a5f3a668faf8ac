"""--parity given a file that is not the package's source: one finding, decided from the file's
header and size before any model is loaded (another model would only diverge at its first
token, after minutes of loading both). Needs no llama.cpp."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.split_parity import ParityRequest
from tests.conftest import PackageFactory


def certify_with_parity(root: Path, source: Path, tmp_path: Path) -> CertReport:
    return certify_package(CertRequest(model=str(root), parity=ParityRequest(
        source=str(source), prompts=["hi"], tokens=1, temp_dir=str(tmp_path))))


def parity_findings(report: CertReport) -> list[tuple[str, str]]:
    return [(f.code, f.message) for f in report.findings if f.check == "split_parity"]


@pytest.mark.parametrize("kind", ["llama", "glm_dsa"])
def test_another_models_file_as_parity_source_is_one_finding(
        packages: PackageFactory, tmp_path: Path, kind: str) -> None:
    info = packages.build()
    other = packages.build(kind, layers=6)
    assert other.source_path is not None
    report = certify_with_parity(info.root, other.source_path, tmp_path)
    [(code, message)] = parity_findings(report)
    assert code == "split_parity_mismatch"
    assert f"the --parity file {other.source_path} is not the package's source" in message
    assert "it has 6 blocks, the package 4 layers" in message and "no model was loaded" in message
    gate = next(g for g in report.runtime_gates if g.name == "split_parity")
    assert gate.status == "failed" and report.status == "failed"
    assert not list(tmp_path.glob("meshcert-parity-*"))  # nothing was reassembled


def test_a_file_of_another_size_than_declared_is_not_the_source(
        packages: PackageFactory, tmp_path: Path) -> None:
    """Same architecture and block count (a copy of the source with bytes appended): the size
    source_model.files declares tells it apart."""
    info = packages.build()
    assert info.source_path is not None
    grown = tmp_path / info.source_path.name
    grown.write_bytes(info.source_path.read_bytes() + bytes(32))
    [(code, message)] = parity_findings(certify_with_parity(info.root, grown, tmp_path))
    size = info.source_path.stat().st_size
    assert code == "split_parity_mismatch"
    assert f"it is {size + 32:,} bytes, source_model.files says {size:,}" in message


def test_the_right_source_is_not_refused_by_the_identity_check(
        packages: PackageFactory, tmp_path: Path) -> None:
    """The package's own source passes the identity check: whatever parity then says (passed
    with llama.cpp, not run without it), it is not "not the package's source"."""
    info = packages.build()
    assert info.source_path is not None
    report = certify_with_parity(info.root, info.source_path, tmp_path)
    gate = next(g for g in report.runtime_gates if g.name == "split_parity")
    assert gate.details and "is not the package's source" not in gate.details
    assert all("is not the package's source" not in m for _, m in parity_findings(report))
