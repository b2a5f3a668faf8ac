"""--verify-sha256 on an hf:// ref streams every artifact through SHA-256 (nothing kept on disk):
it catches content the Hub's metadata does not, and survives a flaky transfer."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.verdict import verdict
from meshcert.certify.view import CertOptions
from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub

TAMPERED = "layers/layer-001.gguf"


@pytest.fixture
def sha(hub: FakeHub, tmp_path: Path) -> str:
    return hub.publish_dir(REPO, build_package(tmp_path).root)


def _codes(report: CertReport) -> set[str]:
    return {f.code for f in report.findings}


def test_tampered_byte_behind_an_unchanged_listing(hub: FakeHub, sha: str) -> None:
    hub.tamper(REPO, sha, TAMPERED, offset=-1)  # in tensor data: headers still parse
    attested = certify_ref(f"hf://{REPO}@{sha}")
    assert attested.status == "passed", attested.findings  # size and LFS sha256 unchanged
    assert attested.verification == "hub-attested"
    # the passed verdict says it trusted the Hub's digests (issue 41 item 1)
    assert attested.coverage is not None and attested.coverage.digests.mode == "hub_attested"
    assert verdict(attested).sentence().startswith(
        "certification passed (digests: Hub-attested (LFS SHA-256), not re-hashed): ")
    streamed = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert streamed.verification == "sha256-streamed"
    assert streamed.coverage is not None and streamed.coverage.digests.mode == "hashed"
    mismatches = [f for f in streamed.findings if f.code == "artifact_sha256_mismatch"]
    assert [(f.path, f.layer_index) for f in mismatches] == [(TAMPERED, 1)]
    assert "hub_sha256_mismatch" not in _codes(streamed)  # the Hub's metadata is right
    assert streamed.status == "failed"


def test_streams_every_artifact_without_keeping_it(hub: FakeHub, sha: str,
                                                   tmp_path: Path) -> None:
    hub.reset_counters()
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert report.status == "passed", report.findings
    full = [r for r in hub.requests("lfs") if r.range is None]
    assert len(full) == 7  # metadata, embeddings, output, 4 layers
    assert report.transfer is not None
    artifact_bytes = sum(len(hub.file_bytes(REPO, sha, p))
                         for p in ("shared/metadata.gguf", "shared/embeddings.gguf",
                                   "shared/output.gguf"))
    assert report.transfer.bytes_transferred > artifact_bytes
    assert not [p for p in (tmp_path / "hf-home").rglob("*") if p.is_file()]
    for stage in report.materialized_stages:
        assert stage.verified_artifacts == stage.selected_part_count


def test_a_broken_transfer_resumes_where_it_stopped(hub: FakeHub, sha: str) -> None:
    lfs_key = hub.repos[REPO].commits[sha].files[TAMPERED].key
    hub.inject("lfs", mode="truncate", times=1, path_contains=lfs_key, without_range=True)
    hub.inject("lfs", mode="drop", times=1, path_contains=lfs_key)
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert report.status == "passed", report.findings
    ranges = [r.range for r in hub.requests("lfs") if lfs_key in r.path]
    assert any(r is not None and r.startswith("bytes=") and r.endswith("-") and r != "bytes=0-"
               for r in ranges), ranges


def test_a_server_ignoring_ranges_still_works(hub: FakeHub, sha: str) -> None:
    hub.ignore_ranges = True
    lfs_key = hub.repos[REPO].commits[sha].files[TAMPERED].key
    hub.inject("lfs", mode="truncate", times=1, path_contains=lfs_key, without_range=True)
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert report.status == "passed", report.findings


def test_a_transfer_that_keeps_failing_is_incomplete_not_unreadable(hub: FakeHub,
                                                                    sha: str) -> None:
    lfs_key = hub.repos[REPO].commits[sha].files[TAMPERED].key
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert report.status == "passed"
    hub.inject("lfs", 503, times=None, path_contains=lfs_key)
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert "hub_unreachable" in _codes(report)
    assert "artifact_sha256_unreadable" not in _codes(report)
    assert report.status == "incomplete"


class RecordingProgress:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tasks: list[tuple[str, int | None]] = []
        self.advanced: dict[str, int] = {}
        self.current = ""

    def begin(self, label: str, total: int | None) -> None:
        self.tasks.append((label, total))
        self.current = label
        self.advanced[label] = 0

    def advance(self, amount: int) -> None:
        with self.lock:
            self.advanced[self.current] += amount

    def end(self) -> None:
        return None


def test_progress_is_reported_through_the_observer(hub: FakeHub, sha: str) -> None:
    progress = RecordingProgress()
    request = CertRequest(model=f"hf://{REPO}@{sha}", options=CertOptions(verify_sha256=True))
    report = certify_package(request, progress)
    assert report.status == "passed"
    totals = dict(progress.tasks)
    streamed = next(label for label in totals if label.startswith("sha256"))
    headers = next(label for label in totals if label.startswith("GGUF headers"))
    assert totals[headers] == progress.advanced[headers] == 7
    assert totals[streamed] == progress.advanced[streamed] > 0
