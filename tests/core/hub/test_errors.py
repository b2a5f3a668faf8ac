"""Every Hub failure becomes a finding with the right code and status, never a traceback:
definite answers (not found, gated, disabled, unauthorized) fail; an unreachable or failing Hub
makes the result incomplete (exit 3), never passed. Backoff sleeps are recorded, not slept."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub


@pytest.fixture
def sha(hub: FakeHub, tmp_path: Path) -> str:
    return hub.publish_dir(REPO, build_package(tmp_path).root)


def _codes(report: CertReport) -> set[str]:
    return {f.code for f in report.findings}


def _only(report: CertReport, code: str, status: str) -> None:
    assert _codes(report) == {code}, report.findings
    assert report.status == status
    assert report.package_gate.status == status


def test_repo_not_found(hub: FakeHub, sha: str) -> None:
    report = certify_ref(f"hf://ns/does-not-exist@{sha}")
    _only(report, "hub_repo_not_found", "failed")
    assert report.ref is not None and report.ref.resolved_commit is None


def test_revision_not_found(hub: FakeHub, sha: str) -> None:
    _only(certify_ref(f"hf://{REPO}@no-such-branch"), "hub_revision_not_found", "failed")
    _only(certify_ref(f"hf://{REPO}@{'0' * 40}"), "hub_revision_not_found", "failed")


def test_gated_files(hub: FakeHub, sha: str) -> None:
    """The real Hub shows a gated repo's metadata but refuses its files."""
    hub.repos[REPO].gated = "manual"
    _only(certify_ref(f"hf://{REPO}@{sha}"), "hub_gated", "failed")


def test_gated_api(hub: FakeHub, sha: str) -> None:
    hub.inject("model_info", 403, headers={"X-Error-Code": "GatedRepo",
                                           "X-Error-Message": "restricted"})
    _only(certify_ref(f"hf://{REPO}@{sha}"), "hub_gated", "failed")


def test_gated_with_access_passes(hub: FakeHub, sha: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    hub.repos[REPO].gated = "manual"
    hub.repos[REPO].gated_access.add("hf_accepted_conditions_1")
    monkeypatch.setenv("HF_TOKEN", "hf_accepted_conditions_1")
    assert certify_ref(f"hf://{REPO}@{sha}").status == "passed"


def test_disabled(hub: FakeHub, sha: str) -> None:
    hub.repos[REPO].disabled = True
    _only(certify_ref(f"hf://{REPO}@{sha}"), "hub_disabled", "failed")


def test_unauthorized(hub: FakeHub, sha: str) -> None:
    hub.repos[REPO].required_token = "hf_someone_elses_token"
    _only(certify_ref(f"hf://{REPO}@{sha}"), "hub_unauthorized", "failed")


def test_rate_limit_is_retried_honouring_retry_after(hub: FakeHub, sha: str) -> None:
    hub.inject("model_info", 429, times=2, headers={"Retry-After": "5"})
    hub.inject("resolve", 429, times=1, headers={"Retry-After": "2"},
               path_contains="model-package.json")
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert report.status == "passed", report.findings
    assert hub.sleeps == [5.0, 5.0, 2.0]
    assert hub.count("model_info") == 3


def test_rate_limit_that_never_ends_is_incomplete_and_bounded(hub: FakeHub, sha: str) -> None:
    hub.inject("model_info", 429, times=None, headers={"Retry-After": "3600"})
    report = certify_ref(f"hf://{REPO}@{sha}")
    _only(report, "hub_unreachable", "incomplete")
    assert hub.count("model_info") == 5  # the first attempt and 4 retries
    assert hub.sleeps == [60.0] * 4  # Retry-After honoured up to a cap
    assert "5 attempts" in report.findings[0].message


@pytest.mark.parametrize("route", ["model_info", "refs", "resolve", "lfs"])
@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_are_incomplete(hub: FakeHub, sha: str, route: str, status: int) -> None:
    hub.inject(route, status, times=None)
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert "hub_unreachable" in _codes(report)
    assert report.status == "incomplete", report.findings
    assert set(hub.sleeps) == {1.0, 2.0, 4.0, 8.0}  # exponential backoff, capped


def test_transient_server_error_is_retried(hub: FakeHub, sha: str) -> None:
    hub.inject("lfs", 503, times=3)
    hub.inject("refs", 502, times=1)
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert report.status == "passed", report.findings


def test_connection_refused(hub: FakeHub, sha: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}/")
    report = certify_ref(f"hf://{REPO}@{sha}")
    _only(report, "hub_unreachable", "incomplete")
    assert "ConnectError" in report.findings[0].message


@pytest.mark.parametrize("route", ["model_info", "resolve", "lfs"])
def test_dropped_connections(hub: FakeHub, sha: str, route: str) -> None:
    hub.inject(route, mode="drop", times=1)
    assert certify_ref(f"hf://{REPO}@{sha}").status == "passed"
    hub.inject(route, mode="drop", times=None)
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert "hub_unreachable" in _codes(report)
    assert report.status == "incomplete"


@pytest.mark.parametrize("route", ["model_info", "resolve", "lfs"])
def test_truncated_bodies(hub: FakeHub, sha: str, route: str) -> None:
    hub.inject(route, mode="truncate", times=1)
    assert certify_ref(f"hf://{REPO}@{sha}").status == "passed"
    hub.inject(route, mode="truncate", times=None)
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert "hub_unreachable" in _codes(report)
    assert report.status == "incomplete"


def test_timeouts(hub: FakeHub, sha: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESHCERT_HUB_TIMEOUT", "0.5")
    hub.inject("model_info", mode="delay", delay_s=5, times=1)
    hub.inject("refs", mode="delay", delay_s=5, times=1)
    hub.inject("lfs", mode="delay", delay_s=5, times=1)
    assert certify_ref(f"hf://{REPO}@{sha}").status == "passed"
    hub.inject("model_info", mode="delay", delay_s=5, times=None)
    report = certify_ref(f"hf://{REPO}@{sha}")
    _only(report, "hub_unreachable", "incomplete")
    assert "Timeout" in report.findings[0].message


def test_header_reads_failing_midway_is_incomplete(hub: FakeHub, sha: str) -> None:
    hub.inject("lfs", 503, times=None, path_contains="")
    report = certify_ref(f"hf://{REPO}@{sha}")
    unreachable = [f for f in report.findings if f.code == "hub_unreachable"]
    assert len(unreachable) == 1  # one finding, not one per fragment
    assert "7 failed" in unreachable[0].message
    assert report.status == "incomplete"


def test_offline_mode_is_incomplete(hub: FakeHub, sha: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    _only(certify_ref(f"hf://{REPO}@{sha}"), "hub_unreachable", "incomplete")


def test_model_info_without_listing_falls_back_to_the_tree(hub: FakeHub, sha: str) -> None:
    hub.repos[REPO].model_info_siblings = False
    hub.page_size = 3
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert report.status == "passed", report.findings
    assert hub.count("tree") > 1


def test_bad_json_is_incomplete(hub: FakeHub, sha: str) -> None:
    hub.inject("model_info", 200, body=b"<html>maintenance</html>")
    _only(certify_ref(f"hf://{REPO}@{sha}"), "hub_unreachable", "incomplete")


def test_a_bug_in_the_source_is_incomplete_not_a_traceback(
        hub: FakeHub, sha: str, monkeypatch: pytest.MonkeyPatch) -> None:
    from meshcert.core.hub.listing import RemoteFile

    def broken(self: object, repo: str, commit: str) -> list[RemoteFile]:
        raise KeyError("boom")

    hub.repos[REPO].model_info_siblings = False
    monkeypatch.setattr("meshcert.core.hub.api.HubApi.tree", broken)
    _only(certify_ref(f"hf://{REPO}@{sha}"), "internal_error", "incomplete")
