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
        assert "certification passed:" in text and "certification failed:" in text
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
