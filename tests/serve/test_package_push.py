"""A package pushed to a watched repo's main gets a signed verdict in the attestation repo,
one that `meshcert attest verify --attestation-repo` accepts, through the real huggingface_hub
client, the in-repo Hub's webhooks and the service under uvicorn."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meshcert.attest.attestation_repo import attestation_path
from meshcert.attest.keys import load_public
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import verify_ref
from tests.support.catalog_packages import PackageShelf
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import ATTESTATIONS, BOT_TOKEN, ServeRig

REPO = "meshllm/tiny-layers"


@pytest.fixture
def served(rig: ServeRig, monkeypatch: pytest.MonkeyPatch) -> ServeRig:
    rig.write_config(watch=["meshllm/*-layers"])
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    return rig


def test_a_pushed_package_gets_a_signed_verdict_attest_verify_accepts(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    with served.running():
        served.hook()
        commit = hub.publish_dir(REPO, shelf.v2())
        status = served.settle()
    # the push is queued; the service's own upload to the attestation dataset (in the
    # watched org) is delivered too, and ignored: that dataset is not a catalog
    assert [(d.payload["repo"]["name"], d.statuses) for d in hub.webhooks.deliveries] == [
        (REPO, [202]), (ATTESTATIONS, [200])]
    files = served.attestation_files()
    assert list(files) == [attestation_path(REPO, commit)]
    policy = TrustPolicy.of_keys([load_public(str(served.key.public_path))])
    verdict = verify_ref(f"hf://{REPO}@{commit}", None, policy, ATTESTATIONS)
    assert verdict.valid, verdict.findings
    assert verdict.result == "PASSED"
    (last,) = status["verdicts"]
    assert last["commit"] == commit and last["status"] == "passed"
    # the service reads the Hub's digests at the pinned commit, and its verdict says so
    assert last["sentence"].startswith("certification passed (digests: Hub-attested (LFS "
                                       "SHA-256), not re-hashed): 0 errors")
    assert last["attestation_url"].endswith(f"/datasets/{ATTESTATIONS}/blob/main/"
                                            f"{attestation_path(REPO, commit)}")


def test_the_cli_verifies_the_uploaded_attestation(served: ServeRig, hub: FakeHub,
                                                   shelf: PackageShelf) -> None:
    from typer.testing import CliRunner

    from meshcert.cli import app

    with served.running():
        served.hook()
        commit = hub.publish_dir(REPO, shelf.v2())
        served.settle()
    result = CliRunner().invoke(app, [
        "attest", "verify", f"hf://{REPO}@{commit}", "--attestation-repo", ATTESTATIONS,
        "--trusted-key", str(served.key.public_path), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["valid"] is True


def test_an_unwatched_repo_is_ignored_with_a_2xx(served: ServeRig, hub: FakeHub,
                                                 shelf: PackageShelf) -> None:
    with served.running():
        served.hook()
        hub.publish_dir("meshllm/not-a-package", shelf.v2())
        status = served.settle()
    assert [d.statuses for d in hub.webhooks.deliveries] == [[200]]  # 2xx: never suspended
    assert status["counts"]["deliveries"] == 1 and status["counts"]["jobs"] == 0
    assert served.attestation_files() == {}


def test_a_lying_head_sha_is_not_certified_the_real_head_is(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf, tmp_path: Path) -> None:
    good = hub.publish_dir(REPO, shelf.v2())
    with served.running():
        hook = served.hook()
        repo = hub.get_repo(REPO)
        assert repo is not None
        payload = hub.webhooks.payload(hook, repo, "repo.content", "update", updatedRefs=[
            {"ref": "refs/heads/main", "oldSha": None, "newSha": "f" * 40}])
        payload["repo"]["headSha"] = "f" * 40
        hub.webhooks.send(payload, hook)
        status = served.settle()
    (last,) = status["verdicts"]
    assert last["commit"] == good
    assert list(served.attestation_files()) == [attestation_path(REPO, good)]


def test_a_certification_the_hub_cut_short_is_retried_and_never_reused(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf,
        caplog: pytest.LogCaptureFixture) -> None:
    root = shelf.v2()
    with served.running():
        hook = served.hook()
        hub.inject("resolve", 503, times=None, path_contains=REPO)  # every read of the package
        commit = hub.publish_dir(REPO, root)
        first = served.settle()
        hub.clear_faults()
        repo = hub.get_repo(REPO)
        assert repo is not None
        hub.webhooks.send(hub.webhooks.payload(hook, repo, "repo.content", "update", updatedRefs=[
            {"ref": "refs/heads/main", "oldSha": None, "newSha": commit}]), hook)
        second = served.settle()
    (incomplete,) = first["verdicts"]
    assert incomplete["status"] == "incomplete" and incomplete["attestation_url"] is None
    assert "will be tried again in 0 s (attempt 2 of 3)" in caplog.text  # then recorded
    assert first["counts"]["certifications"] == 1
    assert served.attestation_commits() == 2  # only the verdict of the second push is signed
    assert second["verdicts"][0]["status"] == "passed"
    assert second["counts"]["certifications"] == 2
