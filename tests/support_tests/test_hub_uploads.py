"""Uploads to the fake Hub through the real huggingface_hub client: LFS over the basic
transfer, atomic commits, parent commits, pull requests, branches, deletions, and no Xet."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

import httpx
import pytest
from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi, constants
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.hf_api import RepoFile

from tests.support.hub_server import FakeHub

LFS_FILES = {"layers/layer-00000.gguf": os.urandom(40_000),
             "layers/layer-00001.gguf": os.urandom(50_000),
             "shared/metadata.gguf": os.urandom(3_000)}
PLAIN_FILES = {"model-package.json": b'{"schema_version": 2}\n', "README.md": b"# card\n"}


@pytest.fixture
def api(hub: FakeHub) -> HfApi:
    hub.add_token("hf_alice", user="alice", orgs={"meshllm": "write"})
    hub.add_token("hf_bob", user="bob")
    api = HfApi(endpoint=hub.url, token="hf_alice")
    api.create_repo("meshllm/pkg")
    return api


def _folder(tmp_path: Path, files: dict[str, bytes]) -> Path:
    for rel, data in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_bytes(data)
    return tmp_path


def test_upload_folder_sends_lfs_files_over_the_basic_transfer(hub: FakeHub, api: HfApi,
                                                               tmp_path: Path) -> None:
    folder = _folder(tmp_path, LFS_FILES | PLAIN_FILES)
    info = api.upload_folder(repo_id="meshllm/pkg", folder_path=folder, commit_message="up")
    assert info.oid == hub.repos["meshllm/pkg"].branches["main"]
    assert info.commit_url == f"{hub.url}/meshllm/pkg/commit/{info.oid}"
    tree = {e.path: e for e in api.list_repo_tree("meshllm/pkg", recursive=True)
            if isinstance(e, RepoFile)}
    for rel, data in LFS_FILES.items():
        lfs = tree[rel].lfs
        assert lfs is not None and lfs.sha256 == hashlib.sha256(data).hexdigest()
        assert hub.file_bytes("meshllm/pkg", info.oid, rel) == data
    assert all(tree[rel].lfs is None for rel in PLAIN_FILES)
    puts = hub.requests("lfs_upload")
    assert sorted(r.bytes_in for r in puts) == sorted(len(d) for d in LFS_FILES.values())
    assert {r.host.split(":")[0] for r in puts} == {"localhost"}  # the storage origin
    assert all(r.authorization is None for r in puts)
    assert hub.count("lfs_verify") == len(LFS_FILES) and hub.count("xet_token") == 0
    commit = hub.repos["meshllm/pkg"].commits[info.oid]
    assert (commit.title, commit.author) == ("up", "alice")


def test_an_object_already_stored_is_not_sent_again(hub: FakeHub, api: HfApi,
                                                    tmp_path: Path) -> None:
    api.upload_folder(repo_id="meshllm/pkg", folder_path=_folder(tmp_path, LFS_FILES))
    hub.reset_counters()
    api.upload_file(path_or_fileobj=LFS_FILES["layers/layer-00000.gguf"],
                    path_in_repo="copy/layer.gguf", repo_id="meshllm/pkg")
    assert hub.count("lfs_batch") == 1 and hub.count("lfs_upload") == 0
    assert "copy/layer.gguf" in hub.paths_at("meshllm/pkg", "main")


def test_no_commit_until_every_lfs_object_is_stored(hub: FakeHub, api: HfApi,
                                                    tmp_path: Path) -> None:
    before = hub.repos["meshllm/pkg"].branches["main"]
    hub.inject("lfs_upload", 500, times=None, after=1)  # the second PUT, and every retry
    with pytest.raises(RuntimeError):
        api.upload_folder(repo_id="meshllm/pkg", folder_path=_folder(tmp_path, LFS_FILES))
    assert hub.count("commit") == 0
    assert hub.repos["meshllm/pkg"].branches["main"] == before
    assert len(hub.sleeps) >= 5  # the client retried the failing PUT (5 backoff sleeps)
    hub.clear_faults()
    hub.reset_counters()
    info = api.upload_folder(repo_id="meshllm/pkg", folder_path=tmp_path)
    assert hub.count("lfs_upload") == len(LFS_FILES) - 1  # the first object was kept
    for commit in hub.all_commits("meshllm/pkg"):
        assert hub.has_objects(f.key for f in commit.files.values())
    assert set(LFS_FILES) <= hub.paths_at("meshllm/pkg", info.oid)


def test_a_commit_naming_a_missing_lfs_object_is_refused_whole(hub: FakeHub, api: HfApi
                                                               ) -> None:
    lines = [{"key": "header", "value": {"summary": "sneaky"}},
             {"key": "file", "value": {"path": "ok.txt", "encoding": "base64",
                                       "content": base64.b64encode(b"ok").decode()}},
             {"key": "lfsFile", "value": {"path": "x.gguf", "algo": "sha256",
                                          "oid": "a" * 64, "size": 3}}]
    answer = httpx.post(f"{hub.url}/api/models/meshllm/pkg/commit/main",
                        content=b"\n".join(json.dumps(x).encode() for x in lines),
                        headers={"Authorization": "Bearer hf_alice",
                                 "Content-Type": "application/x-ndjson"})
    assert answer.status_code == 422
    assert hub.paths_at("meshllm/pkg", "main") == {".gitattributes"}
    assert len(hub.all_commits("meshllm/pkg")) == 1


def test_parent_commit_must_still_be_the_head(hub: FakeHub, api: HfApi) -> None:
    first = hub.repos["meshllm/pkg"].branches["main"]
    api.upload_file(path_or_fileobj=b"one", path_in_repo="a.txt", repo_id="meshllm/pkg")
    with pytest.raises(HfHubHTTPError) as caught:
        api.upload_file(path_or_fileobj=b"two", path_in_repo="b.txt", repo_id="meshllm/pkg",
                        parent_commit=first)
    assert caught.value.response.status_code == 412
    assert "b.txt" not in hub.paths_at("meshllm/pkg", "main")


def test_create_pr_opens_a_pull_request_and_leaves_main_alone(hub: FakeHub, api: HfApi
                                                              ) -> None:
    main = hub.repos["meshllm/pkg"].branches["main"]
    bob = HfApi(endpoint=hub.url, token="hf_bob")  # no write access: a contributor
    info = bob.create_commit("meshllm/pkg", [CommitOperationAdd("new.txt", b"from bob")],
                             commit_message="Add new.txt", create_pr=True)
    assert info.pr_revision == "refs/pr/1" and info.pr_num == 1
    assert info.pr_url == f"{hub.url}/meshllm/pkg/discussions/1"
    assert hub.repos["meshllm/pkg"].branches["main"] == main
    assert "new.txt" in hub.paths_at("meshllm/pkg", "refs/pr/1")
    again = bob.create_commit("meshllm/pkg", [CommitOperationAdd("more.txt", b"more")],
                              commit_message="More", revision="refs/pr/1")
    assert hub.repos["meshllm/pkg"].pulls[1] == again.oid
    assert {"new.txt", "more.txt"} <= hub.paths_at("meshllm/pkg", "refs/pr/1")
    prs = list(api.get_repo_discussions("meshllm/pkg", discussion_type="pull_request"))
    assert [(d.num, d.title, d.author, d.is_pull_request) for d in prs] == [
        (1, "Add new.txt", "bob", True)]
    refs = api.list_repo_refs("meshllm/pkg", include_pull_requests=True)
    assert [(r.ref, r.target_commit) for r in refs.pull_requests or []] == [
        ("refs/pr/1", again.oid)]
    with pytest.raises(HfHubHTTPError) as caught:
        bob.upload_file(path_or_fileobj=b"x", path_in_repo="x.txt", repo_id="meshllm/pkg")
    assert caught.value.response.status_code == 403


def test_create_pull_request_and_its_details(hub: FakeHub, api: HfApi) -> None:
    details = api.create_pull_request("meshllm/pkg", "Catalog entry", description="pinned")
    assert (details.num, details.is_pull_request, details.target_branch) == (
        1, True, "refs/heads/main")
    assert hub.repos["meshllm/pkg"].pulls[1] == hub.repos["meshllm/pkg"].branches["main"]


def test_branches_take_commits_tags_do_not(hub: FakeHub, api: HfApi) -> None:
    api.create_branch("meshllm/pkg", branch="staging")
    api.create_branch("meshllm/pkg", branch="staging", exist_ok=True)
    info = api.upload_file(path_or_fileobj=b"s", path_in_repo="s.txt", repo_id="meshllm/pkg",
                           revision="staging")
    assert hub.repos["meshllm/pkg"].branches["staging"] == info.oid
    assert "s.txt" not in hub.paths_at("meshllm/pkg", "main")
    hub.tag("meshllm/pkg", "v1", info.oid)
    with pytest.raises(HfHubHTTPError) as caught:
        api.upload_file(path_or_fileobj=b"t", path_in_repo="t.txt", repo_id="meshllm/pkg",
                        revision="v1")
    assert caught.value.response.status_code == 400


def test_deleting_files_and_folders(hub: FakeHub, api: HfApi, tmp_path: Path) -> None:
    api.upload_folder(repo_id="meshllm/pkg", folder_path=_folder(tmp_path,
                                                                 LFS_FILES | PLAIN_FILES))
    api.create_commit("meshllm/pkg", [CommitOperationDelete("layers/"),
                                      CommitOperationDelete("README.md")],
                      commit_message="prune")
    assert hub.paths_at("meshllm/pkg", "main") == {".gitattributes", "model-package.json",
                                                   "shared/metadata.gguf"}
    history = api.list_repo_commits("meshllm/pkg")
    assert [c.title for c in history] == ["prune", "Upload folder using huggingface_hub",
                                          "initial commit"]


def test_retry_after_on_the_lfs_batch_is_honoured_by_the_client(hub: FakeHub, api: HfApi
                                                                ) -> None:
    hub.inject("lfs_batch", 429, times=2, headers={"Retry-After": "7"})
    api.upload_file(path_or_fileobj=LFS_FILES["shared/metadata.gguf"],
                    path_in_repo="m.gguf", repo_id="meshllm/pkg")
    assert hub.sleeps[:2] == [8, 8]  # the client sleeps Retry-After + 1 s
    assert [r.status for r in hub.requests("lfs_batch")] == [429, 429, 200]


def test_xet_is_not_offered(hub: FakeHub, api: HfApi, monkeypatch: pytest.MonkeyPatch
                            ) -> None:
    """With hf_xet importable and Xet not disabled, huggingface_hub 2.4 uploads through Xet
    without asking the server first; this Hub refuses Xet tokens, so such an upload fails
    before any commit: a test that passes on this Hub used the LFS path."""
    pytest.importorskip("hf_xet")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
    with pytest.raises(Exception, match="501"):
        api.upload_file(path_or_fileobj=LFS_FILES["shared/metadata.gguf"],
                        path_in_repo="m.gguf", repo_id="meshllm/pkg")
    assert hub.count("xet_token") >= 1
    assert hub.count("commit") == 0 and hub.count("lfs_upload") == 0
