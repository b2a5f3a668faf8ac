"""hub_metadata: what the Hub's listing says about declared artifacts (pure, hf views only)."""

from __future__ import annotations

from typing import Any

from meshcert.certify.checks.hub_metadata import hub_metadata
from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.view import PackageView
from meshcert.core.file_facts import FileFact
from meshcert.core.hub.listing import LFS_SIZES_FACT

SHA_A = "aa" * 32
SHA_B = "bb" * 32
PATH = "layers/layer-00000.gguf"


def _view(fact: FileFact, *, kind: str = "hf", declared_sha: str = SHA_A, size: int = 100,
          lfs_size: int | None = None) -> PackageView:
    manifest: dict[str, Any] = {"layers": [{"layer_index": 0, "path": PATH, "sha256": declared_sha,
                                            "artifact_bytes": size}]}
    view = PackageView(ref=RefInfo(kind=kind, pinned=True), display_ref="x", local_dir=None,  # type: ignore[arg-type]
                       manifest_raw=b"{}", parsed=ParsedManifest(manifest), files={PATH: fact})
    if lfs_size is not None:
        view.source_facts[LFS_SIZES_FACT] = {PATH: lfs_size}
    return view


def _codes(view: PackageView) -> list[tuple[str, str | None, int | None]]:
    return [(f.code, f.path, f.layer_index) for f in hub_metadata(view)]


def test_agreeing_lfs_file_gives_nothing() -> None:
    fact = FileFact(PATH, "file", size=100, lfs_sha256=SHA_A, is_lfs=True)
    assert _codes(_view(fact, declared_sha=SHA_A.upper(), lfs_size=100)) == []


def test_local_views_are_ignored() -> None:
    assert _codes(_view(FileFact(PATH, "missing"), kind="local")) == []


def test_missing() -> None:
    assert _codes(_view(FileFact(PATH, "missing"))) == [("hub_artifact_missing", PATH, 0)]


def test_lfs_sha256_differs_from_the_manifest() -> None:
    fact = FileFact(PATH, "file", size=100, lfs_sha256=SHA_B, is_lfs=True)
    assert _codes(_view(fact)) == [("hub_sha256_mismatch", PATH, 0)]


def test_streamed_digest_already_reports_the_same_disagreement() -> None:
    fact = FileFact(PATH, "file", size=100, sha256=SHA_B, lfs_sha256=SHA_B, is_lfs=True)
    assert _codes(_view(fact)) == []  # artifact_sha256_mismatch says it


def test_hub_attestation_contradicting_the_streamed_content() -> None:
    fact = FileFact(PATH, "file", size=100, sha256=SHA_A, lfs_sha256=SHA_B, is_lfs=True)
    assert _codes(_view(fact)) == [("hub_sha256_mismatch", PATH, 0)]


def test_invalid_declared_sha_is_left_to_the_manifest_checks() -> None:
    fact = FileFact(PATH, "file", size=100, lfs_sha256=SHA_B, is_lfs=True)
    assert _codes(_view(fact, declared_sha="nope")) == []


def test_lfs_pointer_size_contradicting_the_manifest() -> None:
    fact = FileFact(PATH, "file", size=100, lfs_sha256=SHA_A, is_lfs=True)
    assert _codes(_view(fact, lfs_size=99)) == [("hub_size_mismatch", PATH, 0)]


def test_listed_size_mismatch_is_left_to_artifact_size_mismatch() -> None:
    fact = FileFact(PATH, "file", size=99, lfs_sha256=SHA_A, is_lfs=True)
    assert _codes(_view(fact, lfs_size=99)) == []


def test_plain_git_file_is_a_warning() -> None:
    fact = FileFact(PATH, "file", size=100, is_lfs=False)
    findings = list(hub_metadata(_view(fact)))
    assert [(f.code, f.severity) for f in findings] == [("hub_artifact_not_lfs", "warning")]


def test_not_lfs_through_the_hub(hub: Any, tmp_path: Any) -> None:
    """End to end: fragments committed as plain git files."""
    from tests.support.hub_packages import REPO, build_package, certify_ref

    info = build_package(tmp_path)
    sha = hub.publish_dir(REPO, info.root, lfs=lambda path: False)
    report = certify_ref(f"hf://{REPO}@{sha}")
    warned = {f.path for f in report.findings if f.code == "hub_artifact_not_lfs"}
    assert len(warned) == 7
    assert report.status == "passed"  # a warning; the content is not attested, though
    for stage in report.materialized_stages:
        assert stage.verified_artifacts == 0
