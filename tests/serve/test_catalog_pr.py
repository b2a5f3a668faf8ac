"""A catalog pull request gets one comment naming the verdict of every package it adds, edited
in place after a new push; `/meshcert recheck` runs it again only for a user who may write."""

from __future__ import annotations

import json

import pytest
from huggingface_hub import CommitOperationAdd, HfApi

from meshcert.serve.comments import MARKER
from tests.support.catalog_packages import PackageShelf, entry, package_ref, variant
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import (
    BOT,
    BOT_TOKEN,
    CONTRIBUTOR_TOKEN,
    MAINTAINER_TOKEN,
    ServeRig,
)

# every verdict here reads the Hub's digests at the pinned commit, and says so
HUB_ATTESTED = "(digests: Hub-attested (LFS SHA-256), not re-hashed)"

CATALOG = "meshllm/catalog"
ENTRY = "entries/meshcert/tiny-llama.json"


@pytest.fixture
def served(rig: ServeRig, hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> ServeRig:
    rig.write_config(watch=["meshllm/*-layers"], catalogs=(CATALOG,))
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    hub.create_repo(CATALOG, repo_type="dataset")
    hub.commit(CATALOG, {"README.md": b"# catalog\n"}, repo_type="dataset")
    return rig


def entry_bytes(**packages: tuple[str, str]) -> bytes:
    variants = {name: variant(package_ref(repo, revision=rev))
                for name, (repo, rev) in packages.items()}
    return json.dumps(entry("meshcert/tiny-llama", variants), indent=2).encode() + b"\n"


def open_pr(token: str, content: bytes) -> int:
    api = HfApi(token=token)
    info = api.create_commit(CATALOG, [CommitOperationAdd(ENTRY, content)],
                             commit_message="Add tiny-llama", repo_type="dataset",
                             create_pr=True)
    assert info.pr_num is not None
    return int(info.pr_num)


def comments(hub: FakeHub, num: int) -> list[dict[str, object]]:
    repo = hub.get_repo(CATALOG, "dataset")
    assert repo is not None
    return next(d for d in repo.discussions if d.num == num).comments


def test_one_comment_names_both_verdicts_and_is_edited_after_a_push(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    good = hub.publish_dir("meshllm/good-layers", shelf.v2())
    broken = hub.publish_dir("meshllm/broken-layers", shelf.tampered_v1())
    fixed = hub.publish_dir("meshllm/fixed-layers", shelf.v1("fixed"))
    with served.running():
        served.hook()
        num = open_pr(CONTRIBUTOR_TOKEN, entry_bytes(Q4=("meshllm/good-layers", good),
                                                     F16=("meshllm/broken-layers", broken)))
        served.settle()
        (first,) = comments(hub, num)
        text = str(first["content"])
        assert first["author"] == BOT and MARKER in text
        assert text.splitlines()[0] == f"catalog pull request #{num}: 1 of 2 package(s) passed"
        assert f"`meshllm/good-layers` at commit `{good}`" in text
        assert f"`meshllm/broken-layers` at commit `{broken}`" in text
        assert f"certification passed {HUB_ATTESTED}:" in text
        assert f"certification failed {HUB_ATTESTED}:" in text
        HfApi(token=CONTRIBUTOR_TOKEN).create_commit(
            CATALOG, [CommitOperationAdd(ENTRY, entry_bytes(
                Q4=("meshllm/good-layers", good), F16=("meshllm/fixed-layers", fixed)))],
            commit_message="Fix F16", repo_type="dataset", revision=f"refs/pr/{num}")
        served.settle()
    (edited,) = comments(hub, num)
    assert edited["id"] == first["id"] and edited["edited"] is True
    after = str(edited["content"])
    assert after.splitlines()[0] == f"catalog pull request #{num}: 2 of 2 package(s) passed"
    assert f"`meshllm/fixed-layers` at commit `{fixed}`" in after
    assert "broken-layers" not in after


def test_an_entry_that_pins_no_revision_is_named_not_certified(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    hub.publish_dir("meshllm/good-layers", shelf.v2())
    with served.running():
        served.hook()
        num = open_pr(CONTRIBUTOR_TOKEN, entry_bytes(Q4=("meshllm/good-layers", "main")))
        status = served.settle()
    (comment,) = comments(hub, num)
    assert "not certified: pins no revision ('main')" in str(comment["content"])
    assert status["counts"]["jobs"] == 0


def test_recheck_runs_again_for_a_writer_only(served: ServeRig, hub: FakeHub,
                                              shelf: PackageShelf) -> None:
    good = hub.publish_dir("meshllm/good-layers", shelf.v2())
    with served.running():
        served.hook()
        num = open_pr(CONTRIBUTOR_TOKEN, entry_bytes(Q4=("meshllm/good-layers", good)))
        before = served.settle()["counts"]["certifications"]
        HfApi(token=CONTRIBUTOR_TOKEN).comment_discussion(CATALOG, num, "/meshcert recheck",
                                                          repo_type="dataset")
        refused = served.settle()
        HfApi(token=MAINTAINER_TOKEN).comment_discussion(CATALOG, num, "/meshcert recheck",
                                                         repo_type="dataset")
        rerun = served.settle()
    assert refused["counts"]["certifications"] == before == 1
    assert rerun["counts"]["certifications"] == 2
    bot = [c for c in comments(hub, num) if c["author"] == BOT]
    assert len(bot) == 1


def test_a_merged_pull_request_is_certified_again_at_the_merge_commit(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    good = hub.publish_dir("meshllm/good-layers", shelf.v2())
    with served.running():
        served.hook()
        num = open_pr(CONTRIBUTOR_TOKEN, entry_bytes(Q4=("meshllm/good-layers", good)))
        served.settle()
        merged = hub.merge_pull_request(CATALOG, num, repo_type="dataset")
        status = served.settle()
    assert any(t["ref"] == f"refs/pr/{num}" and str(t["detail"]).endswith(
        f"at {merged}; commented on #{num}") for t in status["done"])
    (comment,) = comments(hub, num)
    assert f"`meshllm/good-layers` at commit `{good}`" in str(comment["content"])
    assert status["counts"]["certifications"] == 1  # the same pin: its verdict re-used


def test_a_pull_request_over_the_budget_says_what_was_left_out(
        rig: ServeRig, hub: FakeHub, shelf: PackageShelf,
        monkeypatch: pytest.MonkeyPatch) -> None:
    rig.write_config(watch=["meshllm/*-layers"], catalogs=(CATALOG,),
                     budgets={"max_catalog_packages": 2})
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    hub.create_repo(CATALOG, repo_type="dataset")
    hub.commit(CATALOG, {"README.md": b"# catalog\n"}, repo_type="dataset")
    good = hub.publish_dir("meshllm/good-layers", shelf.v2())
    variants = {f"V{i}": ("meshllm/good-layers", good) for i in range(5)}
    with rig.running():
        rig.hook()
        num = open_pr(CONTRIBUTOR_TOKEN, entry_bytes(**variants))
        rig.settle()
    (comment,) = comments(hub, num)
    text = str(comment["content"])
    assert text.count(f"certification passed {HUB_ATTESTED}:") == 2
    assert "### 3 more package reference(s)" in text
    assert "over the budget of 2 per pull request" in text


def test_a_burst_with_duplicates_runs_one_job_per_key(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    repos = [f"meshllm/burst{i}-layers" for i in range(3)]
    root = shelf.v2()
    commits = {repo: hub.publish_dir(repo, root) for repo in repos}
    with served.running():
        hook = served.hook()
        sent = []
        for i in range(60):
            repo = hub.get_repo(repos[i % 3])
            assert repo is not None
            sent.append(hub.webhooks.send(hub.webhooks.payload(
                hook, repo, "repo.content", "update", updatedRefs=[
                    {"ref": "refs/heads/main", "oldSha": None, "newSha": commits[repo.repo_id]}]),
                hook))
        for delivery in sent[::3]:
            hub.webhooks.replay(delivery)  # 20 replays of the same Webhook-Ids
        status = served.settle()
    assert status["counts"]["jobs"] == 3 and status["counts"]["certifications"] == 3
    assert all(d.delivered for d in sent)
    assert sorted(json.loads(f.decode())["payloadType"] for f in
                  served.attestation_files().values()) == ["application/vnd.in-toto+json"] * 3


def test_a_forged_recheck_naming_a_maintainers_other_comment_runs_nothing(
        served: ServeRig, hub: FakeHub, shelf: PackageShelf) -> None:
    """The payload is a hint: a delivery (forged, or a captured one edited) that claims a
    maintainer's "LGTM" says `/meshcert recheck` is checked against the Hub's comment."""
    good = hub.publish_dir("meshllm/good-layers", shelf.v2())
    with served.running():
        hook = served.hook()
        num = open_pr(CONTRIBUTOR_TOKEN, entry_bytes(Q4=("meshllm/good-layers", good)))
        before = served.settle()["counts"]["certifications"]
        HfApi(token=MAINTAINER_TOKEN).comment_discussion(CATALOG, num, "LGTM",
                                                         repo_type="dataset")
        served.settle()
        lgtm = next(c for c in comments(hub, num) if c["content"] == "LGTM")
        repo = hub.get_repo(CATALOG, "dataset")
        assert repo is not None
        pr = next(d for d in repo.discussions if d.num == num)
        forged = hub.webhooks.payload(
            hook, repo, "discussion.comment", "create",
            discussion=hub.webhooks.discussion_json(repo, pr),
            comment={"id": lgtm["id"], "author": {"id": "x"}, "content": "/meshcert recheck",
                     "hidden": False})
        hub.webhooks.send(forged, hook)
        status = served.settle()
    assert status["counts"]["certifications"] == before == 1
    assert any("recheck ignored: the Hub has no /meshcert recheck comment" in str(t["detail"])
               for t in status["done"])
