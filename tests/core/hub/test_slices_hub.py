"""hf:// slices: with --verify-sha256 a node downloads and hashes only its slice's bytes (and reads
only its slice's headers); the slices of one commit merge to the whole-package verdict, a slice
of another commit fails the merge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.merge import Slice, merge_slices
from meshcert.certify.scope import parse_stage
from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub

N = 2


@pytest.fixture
def sha(hub: FakeHub, tmp_path: Path) -> str:
    return hub.publish_dir(REPO, build_package(tmp_path, layers=4).root)


def _renamed(manifest: dict[str, Any]) -> None:
    manifest["model_id"] = "meshcert/tiny-llama-renamed"


def _touched(hub: FakeHub, sha: str) -> dict[str, tuple[int, int]]:
    """path -> (whole-file downloads, ranged reads) seen by the fake Hub's LFS storage."""
    files = hub.repos[REPO].commits[sha].files
    out = {}
    for path, stored in files.items():
        hits = [r for r in hub.requests("lfs") if stored.key in r.path]
        if hits:
            out[path] = (sum(r.range is None for r in hits), sum(r.range is not None
                                                                  for r in hits))
    return out


def test_a_slice_downloads_and_hashes_only_its_own_parts(hub: FakeHub, sha: str) -> None:
    hub.reset_counters()
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True, scope=parse_stage("1/2"))
    assert report.status == "passed", report.findings
    assert report.scope is not None
    selected = set(report.scope.artifacts)
    assert selected == {"shared/metadata.gguf", "shared/output.gguf",
                        "layers/layer-002.gguf", "layers/layer-003.gguf"}
    touched = _touched(hub, sha)
    assert set(touched) == selected  # no byte of layers 0-1 or the embeddings was fetched
    assert all(whole == 1 for whole, _ in touched.values())
    assert set(report.digests) == selected
    streamed = sum(r.body_bytes for r in hub.requests("lfs") if r.range is None)
    assert streamed == sum(len(hub.file_bytes(REPO, sha, p)) for p in selected)


def test_slices_of_one_commit_merge_to_the_whole_verdict(hub: FakeHub, sha: str) -> None:
    whole = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    parts = [Slice(f"s{i}.json", certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True,
                                             scope=parse_stage(f"{i}/{N}"))) for i in range(N)]
    merged = merge_slices(parts)
    assert whole.status == merged.status == "passed", merged.findings
    assert merged.digests == whole.digests
    assert merged.resolved_package_ref == whole.resolved_package_ref


def test_a_slice_of_another_commit_fails_the_merge(hub: FakeHub, sha: str,
                                                   tmp_path: Path) -> None:
    other = hub.publish_dir(REPO, build_package(tmp_path, "newer", layers=4,
                                                mutate_manifest=_renamed).root)
    first = Slice("s0.json", certify_ref(f"hf://{REPO}@{sha}", scope=parse_stage("0/2")))
    second = Slice("s1.json", certify_ref(f"hf://{REPO}@{other}", scope=parse_stage("1/2")))
    merged = merge_slices([first, second])
    assert merged.status == "failed"
    [mismatch] = [f for f in merged.findings if f.code == "slice_package_mismatch"]
    assert "resolved commit" in mismatch.message and other in mismatch.message
