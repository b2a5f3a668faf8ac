"""Tokens on the fake Hub: whoami, who may create and write repos, private repos, auth-check,
answered as the real client expects (401 without a usable token, 403 without the right)."""

from __future__ import annotations

import pytest
from huggingface_hub import HfApi
from huggingface_hub.errors import HfHubHTTPError, RepositoryNotFoundError

from tests.support.hub_server import FakeHub


@pytest.fixture
def tokens(hub: FakeHub) -> FakeHub:
    hub.add_token("hf_alice", user="alice", orgs={"meshllm": "write", "friends": "read"})
    hub.add_token("hf_reader", user="rita", role="read")
    hub.add_token("hf_scoped", user="sam", orgs={"meshllm": "write"}, role="fineGrained",
                  scopes={"sam": "write", "meshllm": "read"})
    return hub


def test_whoami_names_the_user_orgs_and_role(tokens: FakeHub) -> None:
    me = HfApi(endpoint=tokens.url, token="hf_alice").whoami()
    assert me["name"] == "alice"
    assert {o["name"]: o["roleInOrg"] for o in me["orgs"]} == {"meshllm": "write",
                                                               "friends": "read"}
    assert me["auth"]["accessToken"]["role"] == "write"
    scoped = HfApi(endpoint=tokens.url, token="hf_scoped").whoami()["auth"]["accessToken"]
    assert scoped["role"] == "fineGrained"
    assert [s["entity"]["name"] for s in scoped["fineGrained"]["scoped"]] == ["meshllm", "sam"]


def test_an_unknown_token_is_refused(tokens: FakeHub) -> None:
    with pytest.raises(HfHubHTTPError) as caught:
        HfApi(endpoint=tokens.url, token="hf_nobody").whoami()
    assert caught.value.response.status_code == 401


@pytest.mark.parametrize(("token", "repo_id", "status"), [
    (None, "alice/m", 401),  # no token at all
    ("hf_nobody", "alice/m", 401),  # a token the Hub does not know
    ("hf_reader", "rita/m", 403),  # a read token writes nothing, not even its own namespace
    ("hf_alice", "bob/m", 403),  # somebody else's namespace
    ("hf_alice", "friends/m", 403),  # an org where alice only reads
    ("hf_scoped", "meshllm/m", 403),  # fine-grained: meshllm is read-only for this token
])
def test_who_may_not_create_a_repo(tokens: FakeHub, token: str | None, repo_id: str,
                                   status: int) -> None:
    with pytest.raises(HfHubHTTPError) as caught:
        HfApi(endpoint=tokens.url, token=token).create_repo(repo_id)
    assert caught.value.response.status_code == status
    assert tokens.get_repo(repo_id) is None


def test_create_repo_in_own_and_org_namespaces_with_exist_ok(tokens: FakeHub) -> None:
    api = HfApi(endpoint=tokens.url, token="hf_alice")
    url = api.create_repo("meshllm/pkg")
    assert url.repo_id == "meshllm/pkg" and url.repo_type == "model"
    repo = tokens.repos["meshllm/pkg"]
    assert tokens.paths_at("meshllm/pkg", "main") == {".gitattributes"}  # the Hub's first commit
    assert repo.commits[repo.branches["main"]].author == "alice"
    with pytest.raises(HfHubHTTPError) as caught:
        api.create_repo("meshllm/pkg")
    assert caught.value.response.status_code == 409
    assert api.create_repo("meshllm/pkg", exist_ok=True).repo_id == "meshllm/pkg"
    scoped = HfApi(endpoint=tokens.url, token="hf_scoped")
    assert scoped.create_repo("sam/data", repo_type="dataset").repo_type == "dataset"
    assert tokens.get_repo("sam/data", "dataset") is not None


def test_a_private_repo_is_hidden_outside_its_namespace(tokens: FakeHub) -> None:
    HfApi(endpoint=tokens.url, token="hf_alice").create_repo("alice/secret", private=True)
    assert HfApi(endpoint=tokens.url, token="hf_alice").model_info("alice/secret").private
    for token in (None, "hf_reader"):
        with pytest.raises(RepositoryNotFoundError):
            HfApi(endpoint=tokens.url, token=token).model_info("alice/secret")


def test_auth_check_for_write_access(tokens: FakeHub) -> None:
    tokens.commit("friends/catalog", {"a.json": b"{}"}, repo_type="dataset")
    alice = HfApi(endpoint=tokens.url, token="hf_alice")
    alice.auth_check("friends/catalog", repo_type="dataset")  # reading is fine
    with pytest.raises(HfHubHTTPError) as caught:
        alice.auth_check("friends/catalog", repo_type="dataset", write=True)
    assert caught.value.response.status_code == 403
    tokens.commit("meshllm/catalog", {"a.json": b"{}"}, repo_type="dataset")
    alice.auth_check("meshllm/catalog", repo_type="dataset", write=True)
