"""hf:// verification through the in-repo Hub: the Hub's LFS SHA-256 at the revision, no
artifact byte and no header read, a constant number of requests."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.attest import codes
from meshcert.attest.keys import KeyPair, load_public
from meshcert.attest.package_state import ATTESTATION_PATH, hub_state, local_state
from meshcert.attest.statement import MANIFEST_NAME
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import verify_ref
from tests.conftest import PackageFactory
from tests.support.attestations import certify_and_sign, keypair
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub

REPO = "meshllm/tiny-attested"
HF_VERIFY_REQUESTS = 3  # model_info with the listing, the manifest, the attestation file


@pytest.fixture
def signer(tmp_path: Path) -> KeyPair:
    return keypair(tmp_path / "keys")


def publish_attested(hub: FakeHub, root: Path, signer: KeyPair, tmp_path: Path,  # noqa: F811
                     repo: str = REPO) -> tuple[str, str]:
    """Publish, certify the commit from the Hub, commit the attestation on top."""
    certified = hub.publish_dir(repo, root)
    att = tmp_path / f"{repo.replace('/', '_')}.intoto.jsonl"
    certify_and_sign(f"hf://{repo}@{certified}", signer, att)
    later = hub.commit(repo, {ATTESTATION_PATH: att.read_bytes()}, replace_all=False)
    return certified, later


def policy(signer: KeyPair) -> TrustPolicy:
    return TrustPolicy.of_keys([load_public(signer.key_id)])


def test_a_published_attestation_verifies_at_the_later_commit(
        hub: FakeHub, packages: PackageFactory, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    certified, later = publish_attested(hub, packages.build("llama").root, signer, tmp_path)
    hub.reset_counters()
    verdict = verify_ref(f"hf://{REPO}@{later}", None, policy(signer))
    assert verdict.valid, verdict.findings
    assert [f.code for f in verdict.findings] == [codes.OTHER_COMMIT]
    info = verdict.findings[0]
    assert info.severity == "info" and certified in info.message and later in info.message
    assert hub.count() == HF_VERIFY_REQUESTS
    assert not [r for r in hub.requests() if ".gguf" in r.path]  # no header, no artifact byte


def test_the_request_count_does_not_grow_with_the_package(
        hub: FakeHub, packages: PackageFactory, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    _, later = publish_attested(hub, packages.build("llama", layers=12).root, signer, tmp_path)
    hub.reset_counters()
    assert verify_ref(f"hf://{REPO}@{later}", None, policy(signer)).valid
    assert hub.count() == HF_VERIFY_REQUESTS


def test_a_later_commit_that_changes_an_artifact_is_refused(
        hub: FakeHub, packages: PackageFactory, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    root = packages.build("llama").root
    _, later = publish_attested(hub, root, signer, tmp_path)
    layer = sorted((root / "layers").glob("*.gguf"))[0]
    path = f"layers/{layer.name}"
    changed = hub.commit(REPO, {path: layer.read_bytes() + b"\0"}, replace_all=False)
    assert changed != later
    verdict = verify_ref(f"hf://{REPO}@{changed}", None, policy(signer))
    assert [(f.code, f.path) for f in verdict.findings] == [(codes.SUBJECT_MISMATCH, path)]


def test_an_attestation_of_another_repo(hub: FakeHub, packages: PackageFactory,  # noqa: F811
                                        signer: KeyPair, tmp_path: Path) -> None:
    root = packages.build("llama").root
    publish_attested(hub, root, signer, tmp_path)
    other = hub.publish_dir("someone/copy", root)  # the same bytes under another name
    att = tmp_path / f"{REPO.replace('/', '_')}.intoto.jsonl"  # the one made for REPO
    verdict = verify_ref(f"hf://someone/copy@{other}", str(att), policy(signer))
    assert [f.code for f in verdict.findings] == [codes.RESOURCE_MISMATCH]


def test_no_attestation_in_the_repo(hub: FakeHub, packages: PackageFactory,  # noqa: F811
                                    signer: KeyPair) -> None:
    sha = hub.publish_dir(REPO, packages.build("llama").root)
    verdict = verify_ref(f"hf://{REPO}@{sha}", None, policy(signer))
    assert [f.code for f in verdict.findings] == [codes.MISSING]
    assert ATTESTATION_PATH in verdict.findings[0].message


def test_an_unknown_repo_is_the_hub_s_finding(hub: FakeHub, signer: KeyPair) -> None:  # noqa: F811
    verdict = verify_ref("hf://nobody/nothing@main", None, policy(signer))
    assert not verdict.valid
    assert [f.code for f in verdict.findings] == ["hub_repo_not_found"]


def test_hub_digests_equal_the_local_bytes(hub: FakeHub, packages: PackageFactory  # noqa: F811
                                           ) -> None:
    root = packages.build("llama").root
    sha = hub.publish_dir(REPO, root)
    remote = hub_state(REPO, sha, read_attestation=False)
    local = local_state(str(root))
    assert remote.commit == sha and remote.problems == [] and local.problems == []
    assert remote.digests == local.digests and MANIFEST_NAME in remote.digests
    assert remote.declared == local.declared
