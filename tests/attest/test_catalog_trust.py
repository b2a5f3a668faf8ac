"""`catalog certify --trust FILE [--trust-attested]` in process, through the in-repo Hub: a
package with a valid trusted PASSED attestation is accepted without reading a header, in 3
requests; the others are certified in full under the policy."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from meshcert.attest import codes
from meshcert.attest.catalog_trust import CatalogTrust
from meshcert.attest.keys import KeyPair, load_public
from meshcert.attest.trust import Mode, TrustPolicy
from meshcert.catalog.run import CatalogRequest, CatalogRun, certify_catalog
from meshcert.catalog.sources import LocalCatalog
from meshcert.reports.catalog.outputs import PackageReportWriter, write_catalog_reports
from tests.support.attestations import attest_on_hub, keypair
from tests.support.catalog_packages import PackageShelf, package_ref, variant, write_entry
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub

ATTESTED_REQUESTS = 3  # model_info with the listing, the manifest, the attestation


@dataclass
class Catalog:
    root: Path
    signer: KeyPair
    commits: dict[str, str]  # repo -> the commit the entry pins


@pytest.fixture
def catalog(hub: FakeHub, tmp_path: Path) -> Catalog:  # noqa: F811
    shelf = PackageShelf(tmp_path / "packages")
    signer = keypair(tmp_path / "keys")
    commits = {
        "ns/signed-v1": attest_on_hub(hub, "ns/signed-v1", shelf.v1("s1"), signer, tmp_path),
        "ns/signed-v2": attest_on_hub(hub, "ns/signed-v2", shelf.v2("s2"), signer, tmp_path),
        "ns/plain": hub.publish_dir("ns/plain", shelf.v2("plain")),
    }
    root = tmp_path / "catalog"
    write_entry(root, "meshcert/tiny-llama", {
        name: variant(package_ref(repo, revision=sha))
        for name, (repo, sha) in zip(("A", "B", "C"), commits.items(), strict=True)})
    hub.reset_counters()
    return Catalog(root, signer, commits)


def run(catalog: Catalog, mode: Mode, *, trust_attested: bool,
        out_dir: Path | None = None) -> CatalogRun:
    policy = TrustPolicy.of_keys([load_public(catalog.signer.key_id)], mode=mode)
    return certify_catalog(LocalCatalog(catalog.root), CatalogRequest(
        attestation=CatalogTrust(policy, trust_attested=trust_attested),
        keep_reports=out_dir is not None),
        on_certified=PackageReportWriter(out_dir) if out_dir is not None else None)


def test_attested_packages_are_accepted_without_a_header_read(
        catalog: Catalog, hub: FakeHub) -> None:  # noqa: F811
    report = run(catalog, "warn", trust_attested=True).report
    rows = {r.repo: r for r in report.packages}
    for repo in ("ns/signed-v1", "ns/signed-v2"):
        row = rows[repo]
        assert row.status == "passed" and row.attested_only
        assert row.attested == catalog.signer.key_id
        assert row.requests == ATTESTED_REQUESTS
        assert [f.code for f in row.findings] == [codes.VERIFIED]
        assert f"verified by attestation, signer {catalog.signer.key_id}" in \
            row.findings[0].message
        assert row.facts is not None and row.facts.layer_count == 4
        assert not [r for r in hub.requests() if f"/{repo}/" in r.path and ".gguf" in r.path]
    plain = rows["ns/plain"]
    assert not plain.attested_only and plain.attested is None
    assert plain.status == "passed"  # warn: the missing attestation is a warning
    assert codes.MISSING in plain.warning_codes


def test_enforce_fails_the_unattested_package(catalog: Catalog) -> None:
    rows = {r.repo: r for r in run(catalog, "enforce", trust_attested=True).report.packages}
    assert rows["ns/plain"].status == "failed"
    assert codes.MISSING in rows["ns/plain"].error_codes
    assert rows["ns/signed-v1"].status == "passed"


def test_without_trust_attested_every_package_is_certified_and_its_signer_shown(
        catalog: Catalog) -> None:
    rows = {r.repo: r for r in run(catalog, "enforce", trust_attested=False).report.packages}
    signed = rows["ns/signed-v2"]
    assert signed.status == "passed" and not signed.attested_only
    assert signed.attested == catalog.signer.key_id
    assert signed.requests > ATTESTED_REQUESTS
    assert codes.OTHER_COMMIT not in signed.error_codes + signed.warning_codes


def test_every_request_is_counted_in_the_rows(catalog: Catalog, hub: FakeHub  # noqa: F811
                                              ) -> None:
    for trust_attested in (True, False):
        hub.reset_counters()
        report = run(catalog, "warn", trust_attested=trust_attested).report
        assert sum(r.requests for r in report.packages) == hub.count()  # counted by the server


def test_a_changed_artifact_is_not_accepted_from_the_attestation(
        catalog: Catalog, hub: FakeHub, tmp_path: Path) -> None:  # noqa: F811
    repo = "ns/signed-v1"
    fake_repo = hub.get_repo(repo)
    assert fake_repo is not None
    commit = fake_repo.commits[catalog.commits[repo]]
    layer = sorted(p for p in commit.files if p.startswith("layers/"))[0]
    changed = hub.commit(repo, {layer: hub.blobs[commit.files[layer].key] + b"\0"},
                         replace_all=False)
    write_entry(catalog.root, "meshcert/tiny-llama", {
        "A": variant(package_ref(repo, revision=changed))})
    row = run(catalog, "enforce", trust_attested=True).report.packages[0]
    assert not row.attested_only and row.status == "failed"
    assert codes.SUBJECT_MISMATCH in row.error_codes


def test_out_dir_links_only_the_reports_it_wrote(catalog: Catalog, tmp_path: Path) -> None:
    """An attested package was not certified here: catalog.html links no cert.html of it (it
    linked one that was never written); the certified one's report is there and linked."""
    out = tmp_path / "out"
    report = run(catalog, "warn", trust_attested=True, out_dir=out).report
    write_catalog_reports(report, out_dir=out)
    rows = {r.repo: r for r in report.packages}
    assert rows["ns/signed-v2"].attested_only and rows["ns/signed-v2"].cert_html is None
    assert rows["ns/plain"].cert_html is not None
    page = (out / "catalog.html").read_text()
    links = re.findall(r'href="([^"#:]+)"', page)
    assert rows["ns/plain"].cert_html in links
    assert [h for h in links if not (out / h).is_file()] == []
