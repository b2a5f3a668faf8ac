"""What certifying an hf:// ref costs: constant Hub requests, header-sized transfers, and the
token sent only where it belongs (and never written anywhere)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub

API_ROUTES = ("model_info", "refs", "tree", "paths_info")


def _package_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _certify_counts(hub: FakeHub, tmp_path: Path, layers: int) -> dict[str, int]:
    info = build_package(tmp_path, f"pkg{layers}", layers=layers)
    repo = f"ns/pkg-{layers}"
    sha = hub.publish_dir(repo, info.root)
    hub.reset_counters()
    report = certify_ref(f"hf://{repo}@{sha}")
    assert report.status == "passed", report.findings
    fragments = 3 + layers
    header_requests = sum(1 for r in hub.requests() if r.range is not None)
    return {
        "api": sum(hub.count(route) for route in API_ROUTES),
        "small_files": sum(1 for r in hub.requests("resolve") if r.range is None),
        "header_per_fragment_x100": header_requests * 100 // fragments,
        "fragments": fragments,
        "total": hub.count(),
        "reported": report.transfer.requests if report.transfer else -1,
    }


def test_hub_requests_do_not_grow_with_layers(hub: FakeHub, tmp_path: Path) -> None:
    small = _certify_counts(hub, tmp_path, 4)
    large = _certify_counts(hub, tmp_path, 32)
    # one model_info (the whole listing) + one refs, whatever the number of layers
    assert small["api"] == large["api"] == 2
    # manifest + README, nothing per layer
    assert small["small_files"] == large["small_files"] == 2
    # header reads are per fragment (inherent), and bounded per fragment
    assert small["header_per_fragment_x100"] == large["header_per_fragment_x100"] <= 200
    assert large["total"] - small["total"] == 2 * (large["fragments"] - small["fragments"])
    assert small["reported"] == small["total"] and large["reported"] == large["total"]


def test_only_headers_are_transferred(hub: FakeHub, tmp_path: Path) -> None:
    info = build_package(tmp_path, layers=4, n_embd=256, n_ff=512)
    sha = hub.publish_dir(REPO, info.root)
    hub.reset_counters()
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert report.status == "passed", report.findings
    size = _package_bytes(info.root)
    assert report.transfer is not None
    assert report.transfer.bytes_transferred == hub.bytes_sent("resolve") + hub.bytes_sent(
        "lfs")
    assert report.transfer.bytes_transferred * 10 < size
    assert 0 < report.transfer.header_bytes < report.transfer.bytes_transferred
    assert all(r.status == 206 for r in hub.requests("lfs"))


def test_token_goes_to_the_hub_only_and_never_into_the_report(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "hf_MeshcertDistinctiveSecret0042"
    monkeypatch.setenv("HF_TOKEN", token)
    info = build_package(tmp_path)
    sha = hub.publish_dir(REPO, info.root)
    hub.repos[REPO].required_token = token
    report = certify_ref(f"hf://{REPO}@{sha}", verify_sha256=True)
    assert report.status == "passed", report.findings
    hub_origin = [r for r in hub.requests() if r.host.startswith("127.0.0.1:")]
    storage = [r for r in hub.requests() if r.host.startswith("localhost:")]
    assert hub_origin and all(r.authorization == f"Bearer {token}" for r in hub_origin)
    assert storage and all(r.authorization is None for r in storage)
    assert token not in report.to_json()


def test_token_is_redacted_from_error_messages(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    token = "hf_MeshcertDistinctiveSecret0042"
    monkeypatch.setenv("HF_TOKEN", token)
    info = build_package(tmp_path)
    sha = hub.publish_dir(REPO, info.root)
    echo = {"X-Error-Message": f"token {token} (Bearer {token}) is not allowed here"}
    hub.inject("model_info", 403, headers=echo, body=f'{{"error": "bad {token}"}}'.encode())
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert {f.code for f in report.findings} == {"hub_unauthorized"}
    assert token not in report.to_json()
    hub.inject("resolve", 503, times=None, headers=echo)
    report = certify_ref(f"hf://{REPO}@{sha}")
    assert "hub_unreachable" in {f.code for f in report.findings}
    assert token not in report.to_json()
