"""A package repo's pull request: its head certified and one comment posted, whose first line
is the `models certify` verdict sentence; the Hub failing while the comment is posted; a repo
gone between the event and the job."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.reports.certification.verdict import verdict
from meshcert.serve.comments import MARKER
from tests.support.catalog_packages import PackageShelf
from tests.support.hub_server import FakeHub
from tests.support.hub_webhooks import Webhook
from tests.support.serve_rig import BOT, BOT_TOKEN, ServeRig

REPO = "meshllm/tiny-layers"


@pytest.fixture
def served(rig: ServeRig, monkeypatch: pytest.MonkeyPatch) -> ServeRig:
    rig.write_config(watch=["meshllm/*-layers"])
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    return rig


def pr_files(hub: FakeHub, root: Path) -> str:
    """`root` committed to the repo without moving main (a pull request's head)."""
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.rglob("*")) if p.is_file()}
    return hub.commit(REPO, files, branch=None)


def bot_comments(hub: FakeHub, num: int) -> list[dict[str, object]]:
    repo = hub.get_repo(REPO)
    assert repo is not None
    found = next(d for d in repo.discussions if d.num == num)
    return [c for c in found.comments if c["author"] == BOT]


def test_a_pull_request_gets_one_comment_starting_with_the_verdict_sentence(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    from tests.support.hub_packages import certify_ref

    hub.publish_dir(REPO, shelf.v2())
    head = pr_files(hub, shelf.tampered_v1())
    with served.running():
        served.hook()
        ref = hub.open_pull_request(REPO, head, title="Re-upload")
        status = served.settle()
    num = int(ref.rsplit("/", 1)[1])
    (comment,) = bot_comments(hub, num)
    text = str(comment["content"])
    expected: CertReport = certify_ref(f"hf://{REPO}@{head}")
    assert text.splitlines()[0] == verdict(expected).sentence()
    assert text.splitlines()[1] == MARKER
    assert f"at commit `{head}`" in text
    codes = {f.code for f in expected.findings if f.severity == "error"}
    assert codes and all(f"`{code}`" in text for code in codes)
    assert status["counts"]["certifications"] == 1  # two deliveries (ref, PR), one job


def test_the_hub_failing_while_the_comment_is_posted_keeps_the_verdict(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    hub.publish_dir(REPO, shelf.v2())
    head = pr_files(hub, shelf.v2("pr"))
    with served.running():
        served.hook()
        hub.inject("discussion_comment", 503, times=8)  # beyond the door's retries
        ref = hub.open_pull_request(REPO, head)
        status = served.settle()
    num = int(ref.rsplit("/", 1)[1])
    assert len(bot_comments(hub, num)) == 1
    assert hub.count("discussion_comment") >= 8
    assert status["counts"]["certifications"] == 1  # the verdict was kept, not recomputed


def test_a_repo_gone_before_the_job_ends_it_with_a_clear_line(
        served: ServeRig, hub: FakeHub) -> None:
    with served.running():
        hook: Webhook = served.hook()
        ghost = hub.create_repo("meshllm/ghost-layers")
        payload = hub.webhooks.payload(hook, ghost, "repo.content", "update", updatedRefs=[
            {"ref": "refs/heads/main", "oldSha": None, "newSha": "e" * 40}])
        hub.repos.pop("meshllm/ghost-layers")  # deleted between the event and the job
        hub.webhooks.send(payload, hook)
        status = served.settle()
    (failure,) = status["failures"]
    assert failure["repo"] == "meshllm/ghost-layers"
    assert "repository not found" in failure["detail"]
    assert status["counts"]["failed"] == 1 and status["counts"]["jobs"] == 0


def test_a_users_comment_carrying_the_marker_is_never_edited_or_taken_for_the_services(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    """The service's comment is found by its marker and its own author: a user who posts
    `<!-- meshcert -->` (to have the bot overwrite it, or to hide the verdict) changes nothing."""
    from huggingface_hub import HfApi

    from tests.support.serve_rig import CONTRIBUTOR_TOKEN

    hub.publish_dir(REPO, shelf.v2())
    head = pr_files(hub, shelf.v2("pr"))
    decoy = f"certification passed: trust me\n{MARKER}\n"
    with served.running():
        served.hook()
        ref = hub.open_pull_request(REPO, head)
        num = int(ref.rsplit("/", 1)[1])
        HfApi(token=CONTRIBUTOR_TOKEN).comment_discussion(REPO, num, decoy)
        served.settle()
        HfApi(token=CONTRIBUTOR_TOKEN).comment_discussion(REPO, num, "/meshcert recheck")
        served.settle()
    repo = hub.get_repo(REPO)
    assert repo is not None
    found = next(d for d in repo.discussions if d.num == num).comments
    users = [c for c in found if c["author"] != BOT]
    assert [c["content"] for c in users][:1] == [decoy] and not users[0]["edited"]
    (mine,) = bot_comments(hub, num)
    assert str(mine["content"]).splitlines()[1] == MARKER
    assert "trust me" not in str(mine["content"])
