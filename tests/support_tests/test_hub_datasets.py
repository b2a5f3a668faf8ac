"""Dataset repos live beside model repos, under their own routes, as on the real Hub: info,
tree, paths-info, refs, resolve, and `hf://datasets/...` reads through HfFileSystem."""

from __future__ import annotations

import json

import pytest
from huggingface_hub import HfApi, HfFileSystem, hf_hub_download
from huggingface_hub.errors import RepositoryNotFoundError
from huggingface_hub.hf_api import RepoFile

from tests.support.hub_server import FakeHub

ENTRY = {"schema_version": 1, "source_repo": "org/src", "variants": {}}
FILES = {"entries/org/src.json": json.dumps(ENTRY).encode(), "README.md": b"# catalog\n"}


@pytest.fixture
def catalog(hub: FakeHub) -> str:
    return hub.commit("meshllm/catalog", FILES, repo_type="dataset")


def test_dataset_info_tree_and_paths(hub: FakeHub, catalog: str) -> None:
    api = HfApi(endpoint=hub.url)
    info = api.dataset_info("meshllm/catalog", files_metadata=True)
    assert info.sha == catalog
    assert {s.rfilename for s in info.siblings or []} == set(FILES)
    tree = api.list_repo_tree("meshllm/catalog", repo_type="dataset", recursive=True)
    assert {e.path for e in tree if isinstance(e, RepoFile)} == set(FILES)
    found = api.get_paths_info("meshllm/catalog", ["entries", "nope"], repo_type="dataset")
    assert [p.path for p in found] == ["entries"]
    refs = api.list_repo_refs("meshllm/catalog", repo_type="dataset")
    assert [(b.name, b.target_commit) for b in refs.branches] == [("main", catalog)]
    assert hub.count("dataset_info") == 1 and hub.count("model_info") == 0


def test_a_dataset_is_not_a_model(hub: FakeHub, catalog: str) -> None:
    with pytest.raises(RepositoryNotFoundError):
        HfApi(endpoint=hub.url).model_info("meshllm/catalog")


def test_download_and_hf_uri_reads(hub: FakeHub, catalog: str, tmp_path: object) -> None:
    path = hf_hub_download("meshllm/catalog", "entries/org/src.json", repo_type="dataset",
                           revision=catalog, endpoint=hub.url, cache_dir=str(tmp_path))
    with open(path, "rb") as f:
        assert json.load(f) == ENTRY
    fs = HfFileSystem(endpoint=hub.url)
    assert json.loads(fs.read_text(f"datasets/meshllm/catalog@{catalog}/entries/org/src.json")
                      ) == ENTRY
    assert fs.ls("datasets/meshllm/catalog/entries/org", detail=False) == [
        "datasets/meshllm/catalog/entries/org/src.json"]
    assert any("/datasets/meshllm/catalog/resolve/" in r.path for r in hub.requests("resolve"))
