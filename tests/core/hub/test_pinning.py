"""Only a full commit SHA is pinned; branches, tags, refs/pr/*, short SHAs and no revision are
moving targets: `unpinned_revision` (an error, or a warning with --allow-unpinned)."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from tests.support.hub_packages import REPO, build_package, certify_ref
from tests.support.hub_server import FakeHub


@pytest.fixture
def published(hub: FakeHub, tmp_path: Path) -> dict[str, str]:
    """Two commits: the package, then a README change on main; a tag and a PR on the first."""
    info = build_package(tmp_path)
    first = hub.publish_dir(REPO, info.root)
    (info.root / "README.md").write_text((info.root / "README.md").read_text() + "\nv2\n")
    second = hub.publish_dir(REPO, info.root)
    hub.tag(REPO, "v1.0", first)
    pr = hub.open_pull_request(REPO, first)
    return {"first": first, "second": second, "pr": pr}


def _unpinned(report: CertReport) -> list[str]:
    return [f.severity for f in report.findings if f.code == "unpinned_revision"]


@pytest.mark.parametrize(("revision", "resolves_to"), [
    ("main", "second"),
    ("v1.0", "first"),
    ("pr", "first"),
    ("short", "first"),
    (None, "second"),
])
@pytest.mark.parametrize("allow", [False, True])
def test_moving_revisions_are_unpinned(published: dict[str, str], revision: str | None,
                                       resolves_to: str, allow: bool) -> None:
    text = {"pr": published["pr"], "short": published["first"][:10]}.get(
        revision or "", revision)
    ref = f"hf://{REPO}@{text}" if text else f"hf://{REPO}"
    report = certify_ref(ref, allow_unpinned=allow)
    assert _unpinned(report) == (["warning"] if allow else ["error"])
    assert report.status == ("passed" if allow else "failed")
    assert report.ref is not None
    assert report.ref.pinned is False
    assert report.ref.requested_revision == text
    assert report.ref.resolved_commit == published[resolves_to]
    assert report.resolved_package_ref == f"hf://{REPO}@{published[resolves_to]}"
    message = next(f.message for f in report.findings if f.code == "unpinned_revision")
    assert published[resolves_to] in message


@pytest.mark.parametrize("allow", [False, True])
def test_full_sha_is_pinned(published: dict[str, str], allow: bool) -> None:
    for key in ("first", "second"):
        report = certify_ref(f"hf://{REPO}@{published[key]}", allow_unpinned=allow)
        assert _unpinned(report) == []
        assert report.status == "passed", report.findings
        assert report.ref is not None
        assert report.ref.pinned is True
        assert report.ref.requested_revision == report.ref.resolved_commit == published[key]


def test_colon_revision_syntax(published: dict[str, str]) -> None:
    report = certify_ref(f"hf://{REPO}:{published['first']}")
    assert report.ref is not None and report.ref.pinned


def test_every_call_after_resolution_uses_the_commit(hub: FakeHub,
                                                     published: dict[str, str]) -> None:
    hub.reset_counters()
    report = certify_ref(f"hf://{REPO}@main", allow_unpinned=True)
    assert report.status == "passed"
    resolve = hub.requests("resolve")
    assert resolve and all(f"/resolve/{published['second']}/" in r.path for r in resolve)
    assert [r.path.split("?")[0] for r in hub.requests("model_info")] == [
        f"/api/models/{REPO}/revision/main"]


def test_a_branch_moving_mid_run_does_not_matter(hub: FakeHub, tmp_path: Path,
                                                 published: dict[str, str]) -> None:
    """The branch moves to a broken commit right after resolution: nothing of it is read."""
    from tests.support.hub_server import Fault

    broken = {"model-package.json": b"{not json"}
    moved: list[str] = []

    class MoveAfterModelInfo(Fault):
        def matches(self, route: str, path: str, has_range: bool = False) -> bool:
            if route == "refs" and not moved:
                moved.append(hub.commit(REPO, broken))
            return False

    hub.faults.append(MoveAfterModelInfo("refs"))
    report = certify_ref(f"hf://{REPO}@main", allow_unpinned=True)
    assert moved and report.status == "passed", report.findings
    assert report.ref is not None and report.ref.resolved_commit == published["second"]
