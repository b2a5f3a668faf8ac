"""The fake Hub speaks what the real huggingface_hub client expects (so the other hub tests
exercise the client's real code paths, not a mock)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import pytest
from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import (
    DisabledRepoError,
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.hf_api import RepoFile

from tests.support.hub_repo import git_blob_id
from tests.support.hub_server import FakeHub

FILES = {
    "model-package.json": b'{"schema_version": 1}\n',
    "README.md": b"# card\n",
    "shared/metadata.gguf": b"GGUF" + bytes(range(256)) * 4,
    "layers/layer-00000.gguf": b"GGUF" + bytes(100),
    "layers/layer-00001.gguf": b"GGUF" + bytes(200),
}


@pytest.fixture
def api(hub: FakeHub) -> HfApi:
    return HfApi(endpoint=hub.url)


def test_model_info_lists_sizes_and_lfs_sha256(hub: FakeHub, api: HfApi) -> None:
    sha = hub.commit("ns/repo", FILES)
    info = api.model_info("ns/repo", revision=sha, files_metadata=True)
    assert info.sha == sha
    siblings = {s.rfilename: s for s in info.siblings or []}
    assert set(siblings) == set(FILES)
    gguf = siblings["shared/metadata.gguf"]
    assert gguf.size == len(FILES["shared/metadata.gguf"])
    assert gguf.lfs is not None
    assert gguf.lfs.sha256 == hashlib.sha256(FILES["shared/metadata.gguf"]).hexdigest()
    plain = siblings["model-package.json"]
    assert plain.lfs is None and plain.blob_id == git_blob_id(FILES["model-package.json"])
    bare = api.model_info("ns/repo")  # no revision: main, no blobs
    assert bare.sha == sha
    assert bare.siblings and bare.siblings[0].size is None


def test_tree_pages_through_link_headers(hub: FakeHub, api: HfApi) -> None:
    hub.page_size = 2
    sha = hub.commit("ns/repo", FILES)
    entries = list(api.list_repo_tree("ns/repo", revision=sha, recursive=True, expand=False))
    files = {e.path: e for e in entries if isinstance(e, RepoFile)}
    assert set(files) == set(FILES)
    assert {e.path for e in entries} - set(files) == {"shared", "layers"}
    layer = files["layers/layer-00001.gguf"]
    assert layer.lfs is not None and layer.lfs.sha256 == hashlib.sha256(
        FILES["layers/layer-00001.gguf"]).hexdigest()
    assert hub.count("tree") == 4  # 7 entries, 2 per page
    top = list(api.list_repo_tree("ns/repo", revision=sha))
    assert sorted(e.path for e in top) == ["README.md", "layers", "model-package.json",
                                           "shared"]


def test_paths_info_leaves_missing_paths_out(hub: FakeHub, api: HfApi) -> None:
    sha = hub.commit("ns/repo", FILES)
    infos = api.get_paths_info("ns/repo", ["README.md", "layers", "nope.gguf"], revision=sha)
    assert sorted(i.path for i in infos) == ["README.md", "layers"]


def test_refs_branches_tags_and_pull_requests(hub: FakeHub, api: HfApi) -> None:
    first = hub.commit("ns/repo", FILES)
    second = hub.commit("ns/repo", {**FILES, "README.md": b"# v2\n"})
    hub.tag("ns/repo", "v1", first)
    pr = hub.open_pull_request("ns/repo", second)
    refs = api.list_repo_refs("ns/repo", include_pull_requests=True)
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", second)]
    assert [(t.name, t.target_commit) for t in refs.tags] == [("v1", first)]
    assert refs.pull_requests is not None
    assert [p.ref for p in refs.pull_requests] == [pr] == ["refs/pr/1"]
    assert api.model_info("ns/repo", revision=pr).sha == second  # refs%2Fpr%2F1
    assert api.model_info("ns/repo", revision=first[:8]).sha == first  # short SHA


def test_download_follows_the_lfs_redirect_without_the_token(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", "hf_fakehubtoken123456")
    sha = hub.commit("ns/repo", FILES)
    path = hf_hub_download("ns/repo", "layers/layer-00001.gguf", revision=sha,
                           cache_dir=tmp_path / "cache", endpoint=hub.url)
    assert Path(path).read_bytes() == FILES["layers/layer-00001.gguf"]
    plain = hf_hub_download("ns/repo", "model-package.json", revision=sha,
                            cache_dir=tmp_path / "cache", endpoint=hub.url)
    assert Path(plain).read_bytes() == FILES["model-package.json"]
    resolve = hub.requests("resolve")
    lfs = hub.requests("lfs")
    assert resolve and all(r.authorization == "Bearer hf_fakehubtoken123456" for r in resolve)
    assert lfs and all(r.authorization is None for r in lfs)
    assert all(r.host.startswith("localhost:") for r in lfs)
    assert HfApi(endpoint=hub.url).file_exists("ns/repo", "README.md", revision=sha)
    assert not HfApi(endpoint=hub.url).file_exists("ns/repo", "nope.txt", revision=sha)


def test_errors_are_classified_by_the_client(hub: FakeHub, api: HfApi, tmp_path: Path
                                            ) -> None:
    sha = hub.commit("ns/repo", FILES)
    with pytest.raises(RepositoryNotFoundError) as missing:
        api.model_info("ns/none")
    assert not isinstance(missing.value, GatedRepoError)
    with pytest.raises(RevisionNotFoundError):
        api.model_info("ns/repo", revision="no-such-branch")
    with pytest.raises(EntryNotFoundError):
        api.list_repo_tree("ns/repo", path_in_repo="nope", revision=sha).__iter__().__next__()
    hub.repos["ns/repo"].gated = "manual"
    with pytest.raises(GatedRepoError):
        hf_hub_download("ns/repo", "README.md", revision=sha, endpoint=hub.url,
                        cache_dir=tmp_path / "cache")
    hub.repos["ns/repo"].gated = False
    hub.repos["ns/repo"].disabled = True
    with pytest.raises(DisabledRepoError):
        api.model_info("ns/repo")
    hub.repos["ns/repo"].disabled = False
    hub.repos["ns/repo"].required_token = "hf_needed"
    with pytest.raises(HfHubHTTPError) as unauthorized:
        api.model_info("ns/repo")
    assert unauthorized.value.response.status_code == 401


def test_faults_retry_after_and_counters(hub: FakeHub, api: HfApi) -> None:
    sha = hub.commit("ns/repo", FILES)
    hub.inject("tree", 429, times=2, headers={"Retry-After": "7"})
    entries = list(api.list_repo_tree("ns/repo", revision=sha, recursive=True))
    assert len(entries) == 7
    assert hub.sleeps == [8.0, 8.0]  # Retry-After + 1, as the client does; never slept
    hub.inject("model_info", 500, times=1)
    with pytest.raises(HfHubHTTPError) as failed:
        api.model_info("ns/repo")  # model_info does not retry
    assert failed.value.response.status_code == 500
    assert api.model_info("ns/repo").sha == sha


def test_dropped_and_truncated_answers_surface_as_transport_errors(hub: FakeHub) -> None:
    sha = hub.commit("ns/repo", FILES)
    url = f"{hub.url}/ns/repo/resolve/{sha}/model-package.json"
    hub.inject("resolve", mode="drop")
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(url)
    hub.inject("resolve", mode="truncate")
    with pytest.raises(httpx.RemoteProtocolError):
        httpx.get(url)
    assert httpx.get(url).content == FILES["model-package.json"]


def test_ranges_and_head(hub: FakeHub) -> None:
    sha = hub.commit("ns/repo", FILES)
    data = FILES["shared/metadata.gguf"]
    url = f"{hub.url}/ns/repo/resolve/{sha}/shared/metadata.gguf"
    head = httpx.head(url)
    assert head.status_code == 302
    assert head.headers["X-Repo-Commit"] == sha
    assert head.headers["X-Linked-Size"] == str(len(data))
    assert head.headers["X-Linked-Etag"] == f'"{hashlib.sha256(data).hexdigest()}"'
    part = httpx.get(url, headers={"Range": "bytes=4-19"}, follow_redirects=True)
    assert part.status_code == 206
    assert part.content == data[4:20]
    assert part.headers["Content-Range"] == f"bytes 4-19/{len(data)}"
    tail = httpx.get(url, headers={"Range": "bytes=-3"}, follow_redirects=True)
    assert tail.content == data[-3:]
    beyond = httpx.get(url, headers={"Range": f"bytes={len(data)}-"}, follow_redirects=True)
    assert beyond.status_code == 416
    assert httpx.get(f"{hub.url}/api/agent-harnesses").json() == {
        "standardEnvVars": [], "harnesses": {}}


def test_tamper_changes_content_but_not_the_listing(hub: FakeHub, api: HfApi) -> None:
    sha = hub.commit("ns/repo", FILES)
    before = api.model_info("ns/repo", revision=sha, files_metadata=True)
    hub.tamper("ns/repo", sha, "layers/layer-00000.gguf", offset=10)
    after = api.model_info("ns/repo", revision=sha, files_metadata=True)
    assert [(s.rfilename, s.size, s.lfs) for s in before.siblings or []] == [
        (s.rfilename, s.size, s.lfs) for s in after.siblings or []]
    served = hub.file_bytes("ns/repo", sha, "layers/layer-00000.gguf")
    original = FILES["layers/layer-00000.gguf"]
    assert len(served) == len(original) and served != original
