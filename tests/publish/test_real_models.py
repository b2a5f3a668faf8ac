"""Real SmolLM2 packages, v2 and v1, published to the in-repo Hub over LFS in several commits,
certified at their pinned commit, and listed in the catalog (as a pull request for v2,
published experimental)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meshcert.publish.requests import PublishRequest
from meshcert.publish.service import publish_package
from tests.publish.test_service import CATALOG, assert_no_manifest_before_its_artifacts
from tests.support.hub_server import FakeHub
from tests.support.real_models import SMOLLM2, model_path
from tests.support.splits import split_v1, split_v2

pytestmark = pytest.mark.slow

SOURCE_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF"
SOURCE_REV = "5a1f" + "0" * 36
MODEL_ID = f"{SOURCE_REPO}:Q4_1"


@pytest.fixture
def catalog(hub: FakeHub) -> str:
    return hub.commit(CATALOG, {"README.md": b"# catalog\n"}, repo_type="dataset")


@pytest.mark.parametrize("version", ["v2", "v1"])
def test_publish_smollm2(hub: FakeHub, tmp_path: Path, catalog: str, version: str) -> None:
    split = split_v2 if version == "v2" else split_v1
    package = split(model_path(SMOLLM2), tmp_path / version, model_id=MODEL_ID,
                    repo=SOURCE_REPO, revision=SOURCE_REV)
    target = f"meshllm/SmolLM2-135M-Instruct-Q4_1-{version}-layers"
    result = publish_package(PublishRequest(
        str(package.root), target, catalog=CATALOG, experimental=version == "v2",
        max_files_per_commit=8))
    assert result.status == "published", result.message
    assert result.remote_report is not None
    assert result.remote_report.package_format == version
    assert [f.code for f in result.remote_report.findings if f.severity != "info"] == []
    assert len(result.commits) >= 4  # 30 layers + shared files, 8 per commit, manifest last
    assert_no_manifest_before_its_artifacts(hub, target)
    assert hub.count("xet_token") == 0
    assert hub.bytes_received("lfs_upload") == sum(p.stat().st_size
                                                   for p in package.files.values())
    assert result.catalog is not None
    rev = "refs/pr/1" if version == "v2" else "main"
    entry = json.loads(hub.file_bytes(CATALOG, rev, result.catalog.path, repo_type="dataset"))
    [variant] = entry["variants"].values()
    assert variant["source"]["file"] == SMOLLM2.filename
    assert variant["packages"][-1]["revision"] == result.commit
    assert (result.catalog.pull_request_url is not None) == (version == "v2")
