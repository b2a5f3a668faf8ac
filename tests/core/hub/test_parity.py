"""A package certified from a local folder and the same package served by the Hub give the same
findings (the issue's "done when"), with the real huggingface_hub client against the fake Hub."""

from __future__ import annotations

import json
from pathlib import Path

from meshcert.certify.report import CertReport
from meshcert.testing import PackageInfo
from tests.support.hub_packages import REPO, build_package, certify_ref, finding_keys
from tests.support.hub_server import FakeHub


def _both(hub: FakeHub, info: PackageInfo, **options: object) -> tuple[CertReport, CertReport]:
    sha = hub.publish_dir(REPO, info.root)
    local = certify_ref(str(info.root), verify_sha256=True)
    remote = certify_ref(f"hf://{REPO}@{sha}", **options)
    return local, remote


def _rewrite_manifest(info: PackageInfo, edit: object) -> None:
    path = info.root / "model-package.json"
    data = json.loads(path.read_text())
    edit(data)  # type: ignore[operator]
    path.write_text(json.dumps(data, indent=2))


def test_good_package_same_findings_and_passes(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    local, remote = _both(hub, info)
    assert finding_keys(remote) == finding_keys(local)
    assert remote.status == local.status == "passed"
    assert remote.manifest_sha256 == local.manifest_sha256
    assert remote.model_id == local.model_id and remote.layer_count == local.layer_count
    assert remote.verification == "hub-attested" and local.verification == "local-sha256"
    assert remote.ref is not None and remote.ref.pinned
    assert remote.resolved_package_ref == f"hf://{REPO}@{remote.ref.resolved_commit}"
    # every selected artifact of both stages is verified by the Hub's LFS attestation
    for stage in remote.materialized_stages:
        assert stage.verified_artifacts == stage.selected_part_count


def test_good_package_same_findings_with_streamed_hashes(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    local, remote = _both(hub, info, verify_sha256=True)
    assert finding_keys(remote) == finding_keys(local)
    assert remote.verification == "sha256-streamed"


def test_size_mismatch_same_findings(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    _rewrite_manifest(info, lambda m: m["layers"][2].update(
        artifact_bytes=m["layers"][2]["artifact_bytes"] + 1))
    local, remote = _both(hub, info)
    assert finding_keys(remote) == finding_keys(local)
    assert ("artifact_size_mismatch", "error", "layers/layer-002.gguf", 2) in finding_keys(
        remote)
    assert remote.status == "failed"


def test_undeclared_gguf_same_findings(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    (info.root / "layers" / "layer-099.gguf").write_bytes(
        (info.root / "layers" / "layer-000.gguf").read_bytes())
    local, remote = _both(hub, info)
    assert finding_keys(remote) == finding_keys(local)
    assert ("undeclared_artifact", "warning", "layers/layer-099.gguf", None) in finding_keys(
        remote)


def test_bad_fragment_same_findings(hub: FakeHub, tmp_path: Path) -> None:
    """A fragment that is not GGUF at all, with a manifest that matches its bytes: only the
    header read can tell, locally from disk and remotely from HTTP ranges."""
    info = build_package(tmp_path)
    bad = info.root / "layers" / "layer-001.gguf"
    bad.write_bytes(b"NOPE" + bad.read_bytes()[4:])
    import hashlib

    _rewrite_manifest(info, lambda m: m["layers"][1].update(
        sha256=hashlib.sha256(bad.read_bytes()).hexdigest()))
    local, remote = _both(hub, info)
    assert finding_keys(remote) == finding_keys(local)
    assert "gguf_bad_magic" in {f.code for f in remote.findings}


def test_content_mismatch_same_findings_with_streamed_hashes(hub: FakeHub,
                                                             tmp_path: Path) -> None:
    """The manifest's sha256 is wrong for a layer. Streamed: the same artifact_sha256_mismatch
    as locally. Default (Hub-attested): the Hub's LFS sha256 tells, without a download."""
    info = build_package(tmp_path)
    _rewrite_manifest(info, lambda m: m["layers"][3].update(sha256="ab" * 32))
    local, streamed = _both(hub, info, verify_sha256=True)
    assert finding_keys(streamed) == finding_keys(local)
    assert ("artifact_sha256_mismatch", "error", "layers/layer-003.gguf", 3) in finding_keys(
        local)
    attested = certify_ref(f"hf://{REPO}@{streamed.ref.resolved_commit}")  # type: ignore[union-attr]
    expected = [("hub_sha256_mismatch", *k[1:]) if k[0] == "artifact_sha256_mismatch" else k
                for k in finding_keys(local)]
    assert finding_keys(attested) == sorted(expected)


def test_missing_file_adds_only_the_hub_code(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path)
    (info.root / "layers" / "layer-002.gguf").unlink()
    local, remote = _both(hub, info)
    extra = [k for k in finding_keys(remote) if k not in finding_keys(local)]
    assert extra == [("hub_artifact_missing", "error", "layers/layer-002.gguf", 2)]
    assert [k for k in finding_keys(local) if k not in finding_keys(remote)] == []
    assert "missing_artifact" in {f.code for f in remote.findings}
