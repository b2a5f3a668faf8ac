"""The in-repo Hub's discussions as huggingface_hub's HfApi reads and writes them: a pull
request opened programmatically is a draft, comments are posted and edited (by their author
only), details carry the comments and the pull request's diff, listing filters and pages."""

from __future__ import annotations

import pytest
from huggingface_hub import CommitOperationAdd, HfApi
from huggingface_hub.errors import HfHubHTTPError

from tests.support.hub_server import FakeHub

REPO = "ns/data"


@pytest.fixture
def api(hub: FakeHub) -> HfApi:
    hub.add_token("hf_alice", user="alice", orgs={"ns": "write"})
    hub.add_token("hf_bob", user="bob")
    hub.commit(REPO, {"a.txt": b"one\n"}, repo_type="dataset")
    return HfApi(token="hf_alice")


def test_comments_are_posted_edited_by_their_author_and_listed(api: HfApi) -> None:
    opened = api.create_pull_request(REPO, "A change", repo_type="dataset")
    assert opened.status == "draft"
    posted = api.comment_discussion(REPO, opened.num, "first", repo_type="dataset")
    edited = api.edit_discussion_comment(REPO, opened.num, posted.id, "second",
                                         repo_type="dataset")
    assert edited.content == "second" and edited.edited
    with pytest.raises(HfHubHTTPError) as refused:
        HfApi(token="hf_bob").edit_discussion_comment(REPO, opened.num, posted.id, "mine",
                                                      repo_type="dataset")
    assert refused.value.response.status_code == 403
    details = api.get_discussion_details(REPO, opened.num, repo_type="dataset")
    assert [(e.author, getattr(e, "content", None)) for e in details.events] == [
        ("alice", "second")]
    HfApi(token="hf_bob").create_discussion(REPO, "A question", repo_type="dataset")
    by_bob = list(api.get_repo_discussions(REPO, author="bob", repo_type="dataset"))
    assert [d.title for d in by_bob] == ["A question"]
    prs = list(api.get_repo_discussions(REPO, discussion_type="pull_request",
                                        repo_type="dataset"))
    assert [d.num for d in prs] == [opened.num]


def test_a_pull_requests_details_carry_its_diff(api: HfApi) -> None:
    info = api.create_commit(REPO, [CommitOperationAdd("a.txt", b"one\ntwo\n")],
                             commit_message="Add a line", repo_type="dataset", create_pr=True)
    assert info.pr_num is not None
    details = api.get_discussion_details(REPO, info.pr_num, repo_type="dataset")
    assert details.target_branch == "refs/heads/main"
    assert "diff --git a/a.txt b/a.txt" in (details.diff or "")
    assert "+two" in (details.diff or "")


def test_listing_pages_by_fifty(api: HfApi) -> None:
    for i in range(60):
        api.create_discussion(REPO, f"d{i}", repo_type="dataset")
    assert len(list(api.get_repo_discussions(REPO, repo_type="dataset"))) == 60
