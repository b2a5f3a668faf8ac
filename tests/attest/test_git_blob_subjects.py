"""Attestations without downloads: a package's plain-git files (v2 publisher files under
metadata/, which the Hub lists with a git blob id but no LFS SHA-256) are subjects carrying
in-toto's `gitBlob` digest beside `sha256`, so `attest verify hf://` and `catalog certify
--trust-attested` match them from the listing: 3 requests for a package with all five publisher
files, as for one with none. An attestation made before `gitBlob` still verifies, by
downloading those files as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.attest import codes
from meshcert.attest.catalog_trust import CatalogTrust
from meshcert.attest.keys import KeyPair, load_public
from meshcert.attest.package_state import ATTESTATION_PATH, git_blob_subjects, hub_state
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import verify_ref
from meshcert.catalog.run import CatalogRequest, certify_catalog
from meshcert.catalog.sources import LocalCatalog
from meshcert.core.git_blob import git_blob_id
from tests.certify.publisher_packages import build_published, five_publisher_files
from tests.support.attestations import (
    attest_on_hub,
    certify,
    edit_statement,
    keypair,
    statement_of,
)
from tests.support.catalog_packages import package_ref, variant, write_entry
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub

REPO = "meshllm/tiny-publisher-attested"
HF_VERIFY_REQUESTS = 3  # model_info with the listing, the manifest, the attestation file
PUBLISHER_PATHS = sorted(f"metadata/{name}" for name in five_publisher_files())


@pytest.fixture
def signer(tmp_path: Path) -> KeyPair:
    return keypair(tmp_path / "keys")


@pytest.fixture
def published(hub: FakeHub, tmp_path: Path, signer: KeyPair) -> tuple[Path, str]:  # noqa: F811
    """A v2 package with all five publisher files, attested on the Hub: (its dir, the commit
    that carries the attestation)."""
    pkg = build_published(tmp_path / "pkg", five_publisher_files())
    return pkg.root, attest_on_hub(hub, REPO, pkg.root, signer, tmp_path)


def policy(signer: KeyPair) -> TrustPolicy:
    return TrustPolicy.of_keys([load_public(signer.key_id)])


def attestation_of(hub: FakeHub, commit: str, out: Path) -> Path:  # noqa: F811
    out.write_bytes(hub.file_bytes(REPO, commit, ATTESTATION_PATH))
    return out


def test_git_blob_id_is_git_s_own() -> None:
    # `git hash-object` of an empty file and of "hello\n" (git's documented values)
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    assert git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


def test_publisher_subjects_carry_their_git_blob_id(
        published: tuple[Path, str], hub: FakeHub, tmp_path: Path) -> None:  # noqa: F811
    root, later = published
    subjects = {s["name"]: s["digest"] for s in statement_of(
        attestation_of(hub, later, tmp_path / "att.jsonl"))["subject"]}
    for path in PUBLISHER_PATHS:
        data = (root / path).read_bytes()
        assert subjects[path]["gitBlob"] == git_blob_id(data)
    assert all("gitBlob" not in d for p, d in subjects.items() if p.endswith(".gguf"))
    # a local certification records the same ids (the files are read whole there too)
    report = certify(str(root))
    assert report.git_blobs == {p: subjects[p]["gitBlob"] for p in PUBLISHER_PATHS}


def test_attest_verify_of_five_publisher_files_takes_three_requests(
        published: tuple[Path, str], hub: FakeHub, signer: KeyPair) -> None:  # noqa: F811
    _, later = published
    hub.reset_counters()
    verdict = verify_ref(f"hf://{REPO}@{later}", None, policy(signer))
    assert verdict.valid, verdict.findings
    assert hub.count() == HF_VERIFY_REQUESTS
    assert not [r for r in hub.requests() if "metadata/" in r.path or ".gguf" in r.path]


def test_a_changed_publisher_file_is_a_subject_mismatch_without_a_download(
        published: tuple[Path, str], hub: FakeHub, signer: KeyPair) -> None:  # noqa: F811
    _, later = published
    path = "metadata/generation_config.json"
    changed = hub.commit(REPO, {path: b'{"temperature": 1.5}\n'}, replace_all=False)
    hub.reset_counters()
    verdict = verify_ref(f"hf://{REPO}@{changed}", None, policy(signer))
    assert [(f.code, f.path) for f in verdict.findings] == [(codes.SUBJECT_MISMATCH, path)]
    assert "git blob id" in verdict.findings[0].message
    assert hub.count() == HF_VERIFY_REQUESTS


def test_an_attestation_without_git_blobs_still_verifies_by_downloading(
        published: tuple[Path, str], hub: FakeHub, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    _, later = published
    old = attestation_of(hub, later, tmp_path / "old.jsonl")

    def drop_git_blobs(statement: dict[str, object]) -> None:
        for subject in statement["subject"]:  # type: ignore[attr-defined]
            subject["digest"].pop("gitBlob", None)

    edit_statement(old, drop_git_blobs, signer)  # as meshcert signed before gitBlob
    assert git_blob_subjects(old.read_bytes()) == set()
    hub.reset_counters()
    verdict = verify_ref(f"hf://{REPO}@{later}", str(old), policy(signer))
    assert verdict.valid, verdict.findings
    downloaded = sorted({r.path.rsplit(f"{later}/", 1)[-1] for r in hub.requests()
                         if "metadata/" in r.path})
    assert downloaded == PUBLISHER_PATHS  # each plain-git file read to hash it, as before
    assert hub.count() == HF_VERIFY_REQUESTS - 1 + len(PUBLISHER_PATHS)  # no attestation read


def test_a_forged_git_blob_is_refused(
        published: tuple[Path, str], hub: FakeHub, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    _, later = published
    att = attestation_of(hub, later, tmp_path / "forged.jsonl")
    path = "metadata/config.json"

    def forge(statement: dict[str, object]) -> None:
        for subject in statement["subject"]:  # type: ignore[attr-defined]
            if subject["name"] == path:
                subject["digest"]["gitBlob"] = git_blob_id(b"something else")

    edit_statement(att, forge, signer)
    state = hub_state(REPO, later, read_attestation=False, attestation=att.read_bytes())
    assert set(state.git_blobs) == set(PUBLISHER_PATHS)  # matched from the listing
    verdict = verify_ref(f"hf://{REPO}@{later}", str(att), policy(signer))
    assert [(f.code, f.path) for f in verdict.findings] == [(codes.SUBJECT_MISMATCH, path)]


def test_trust_attested_accepts_a_publisher_package_in_three_requests(
        published: tuple[Path, str], hub: FakeHub, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    _, later = published
    catalog = tmp_path / "catalog"
    write_entry(catalog, "meshcert/tiny-llama", {"A": variant(package_ref(REPO,
                                                                           revision=later))})
    hub.reset_counters()
    report = certify_catalog(LocalCatalog(catalog), CatalogRequest(
        attestation=CatalogTrust(policy(signer), trust_attested=True))).report
    [row] = report.packages
    assert row.status == "passed" and row.attested_only, row.findings
    assert row.requests == HF_VERIFY_REQUESTS
    assert not [r for r in hub.requests() if "metadata/" in r.path]
