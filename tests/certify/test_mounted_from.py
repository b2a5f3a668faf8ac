"""`--mounted-from hf://ns/repo@<commit>`: a local directory that is a Hub repo mounted at a
commit (an HF Jobs volume) is read and hashed locally, and the report names the Hub ref."""

from __future__ import annotations

from meshcert.certify.service import CertRequest, certify_package
from tests.conftest import PackageFactory

SHA = "0123456789abcdef0123456789abcdef01234567"


def test_the_report_names_the_mounted_ref_and_the_bytes_are_hashed_here(
        packages: PackageFactory) -> None:
    info = packages.build(layers=4)
    report = certify_package(CertRequest(model=str(info.root),
                                         mounted_from=f"hf://ns/pkg@{SHA}"))
    assert report.status == "passed"
    assert report.resolved_package_ref == f"hf://ns/pkg@{SHA}"
    assert report.ref is not None and (report.ref.kind, report.ref.pinned) == ("hf", True)
    assert report.local_package_dir == str(info.root)
    assert report.verification == "local-sha256" and report.digests


def test_a_moving_revision_is_refused_as_a_mounted_ref(packages: PackageFactory) -> None:
    info = packages.build(layers=4)
    report = certify_package(CertRequest(model=str(info.root), mounted_from="hf://ns/pkg@main"))
    assert report.status == "failed"
    assert [f.code for f in report.findings if f.code == "invalid_package_ref"] == [
        "invalid_package_ref"]
    assert report.ref is not None and report.ref.kind == "local"
