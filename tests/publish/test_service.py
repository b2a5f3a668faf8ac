"""`publish_package` against the in-repo Hub through the real huggingface_hub client: batched
LFS commits with the manifest last, resume after a failure, refusals before any upload,
pull requests, branches, and the catalog entry pinned to the published commit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meshcert.certify.card_facts import artifacts
from meshcert.publish.requests import PublishRequest, PublishResult
from meshcert.publish.service import publish_package
from meshcert.testing import PackageInfo, llama_spec, write_package
from tests.publish.conftest import OUTSIDER
from tests.support.hub_server import FakeHub

TARGET = "meshllm/tiny-layers"
CATALOG = "meshllm/catalog"


def _package(tmp_path: Path, name: str = "pkg", layers: int = 4) -> PackageInfo:
    return write_package(llama_spec(block_count=layers), tmp_path / name)


def _publish(root: Path, target: str = TARGET, **kwargs: object) -> PublishResult:
    return publish_package(PublishRequest(str(root), target, **kwargs))  # type: ignore[arg-type]


def assert_no_manifest_before_its_artifacts(hub: FakeHub, repo: str) -> None:
    """Every commit the Hub ever recorded that shows a manifest shows all its artifacts too,
    each with the sha256 the manifest declares."""
    for commit in hub.all_commits(repo):
        stored = commit.files.get("model-package.json")
        if stored is None:
            continue
        manifest = json.loads(hub.blobs[stored.key])
        for item in artifacts(manifest):
            there = commit.files.get(item.path)
            assert there is not None and there.lfs_sha256 == item.sha256, (commit.sha, item)


def _lfs_bytes(info: PackageInfo) -> int:
    return sum(p.stat().st_size for p in info.files.values())


def test_publish_in_batched_lfs_commits_with_the_manifest_last(hub: FakeHub,
                                                               tmp_path: Path) -> None:
    info = _package(tmp_path)  # 7 artifacts
    result = _publish(info.root, max_files_per_commit=3)
    assert result.status == "published", result.message
    assert result.remote_report is not None and result.remote_report.status == "passed"
    repo = hub.repos[TARGET]
    assert result.commit == repo.branches["main"] == result.commits[-1]
    assert len(result.commits) == 4  # 3 + 3 + 1 artifacts, then manifest and card
    assert result.ref == f"hf://{TARGET}@{result.commit}"
    assert result.serve_command == f"mesh-llm serve --model hf://{TARGET}@{result.commit} --split"
    with_manifest = [c.sha for c in hub.all_commits(TARGET) if "model-package.json" in c.files]
    assert with_manifest == [result.commit]
    assert_no_manifest_before_its_artifacts(hub, TARGET)
    card = hub.file_bytes(TARGET, result.commit, "README.md").decode()
    assert "library_name: mesh-llm" in card
    assert not [f for f in result.remote_report.findings if f.code.startswith("readme")]
    # LFS, not Xet: every artifact byte went through a PUT to the storage origin
    assert hub.count("xet_token") == 0
    assert hub.bytes_received("lfs_upload") == _lfs_bytes(info)


@pytest.mark.usefixtures("xet_on")
def test_a_process_that_would_upload_over_xet_is_refused_before_certifying(
        hub: FakeHub, tmp_path: Path) -> None:
    """huggingface_hub imported without HF_HUB_DISABLE_XET (a library caller's own process):
    meshcert does not flip the client's constants, it refuses and says how to fix it."""
    info = _package(tmp_path)
    result = _publish(info.root)
    assert result.status == "refused"
    assert "HF_HUB_DISABLE_XET=1" in result.message and "Xet" in result.message
    assert result.local_report is None  # refused before certifying: nothing spent
    assert hub.count() == 0


def test_a_package_that_does_not_certify_is_refused_before_any_upload(
        hub: FakeHub, tmp_path: Path) -> None:
    info = _package(tmp_path)
    (info.root / "layers" / "layer-002.gguf").write_bytes(b"GGUF broken")
    result = _publish(info.root)
    assert result.status == "refused" and "does not certify passed" in result.message
    assert result.local_report is not None and result.local_report.status == "failed"
    assert hub.only_access_checks() and TARGET not in hub.repos


def test_a_failure_mid_way_then_a_rerun_resumes_without_re_uploading(
        hub: FakeHub, tmp_path: Path) -> None:
    info = _package(tmp_path)
    hub.inject("commit", 500, times=None, after=2)  # the third commit never lands
    first = _publish(info.root, max_files_per_commit=2)
    assert first.status == "incomplete", first.message
    assert len(first.commits) == 2 and "gave up after 8 attempts" in first.message
    assert "model-package.json" not in hub.paths_at(TARGET, "main")
    sent_before = hub.bytes_received("lfs_upload")
    assert hub.sleeps  # backoff between the attempts (recorded, not slept)
    hub.clear_faults()
    hub.reset_counters()
    second = _publish(info.root, max_files_per_commit=2)
    assert second.status == "published", second.message
    assert second.skipped == first.uploaded  # the committed batches were not sent again
    # each artifact crossed the wire exactly once over both runs (the failed batch's objects
    # were stored before its commit failed; the LFS batch answer lets the client skip them)
    assert sent_before + hub.bytes_received("lfs_upload") == _lfs_bytes(info)
    assert_no_manifest_before_its_artifacts(hub, TARGET)


def test_retry_after_on_a_commit_is_honoured(hub: FakeHub, tmp_path: Path) -> None:
    hub.inject("commit", 503, headers={"Retry-After": "5"})
    result = _publish(_package(tmp_path, layers=2).root)
    assert result.status == "published", result.message
    assert 5.0 in hub.sleeps


def test_a_file_changed_after_certification_is_never_sent(hub: FakeHub, tmp_path: Path
                                                          ) -> None:
    info = _package(tmp_path)
    layer = info.root / "layers" / "layer-001.gguf"

    def tamper(message: str) -> None:
        if message.startswith("target "):  # certified; nothing uploaded yet
            layer.write_bytes(layer.read_bytes()[:-1] + b"\x00")

    result = publish_package(PublishRequest(str(info.root), TARGET), progress=tamper)
    assert result.status == "failed" and "changed after it was certified" in result.message
    assert "layers/layer-001.gguf" not in hub.paths_at(TARGET, "main")


def test_republishing_another_package_never_shows_a_mismatched_manifest(
        hub: FakeHub, tmp_path: Path) -> None:
    old = _package(tmp_path, "old", layers=4)
    assert _publish(old.root).status == "published"
    new = write_package(llama_spec(block_count=2, n_embd=96), tmp_path / "new")
    result = _publish(new.root, max_files_per_commit=2)
    assert result.status == "published", result.message
    assert_no_manifest_before_its_artifacts(hub, TARGET)
    assert hub.paths_at(TARGET, "main") == {
        ".gitattributes", "README.md", "model-package.json", *new.files}  # stale layers gone


def test_create_pr_publishes_on_a_pull_request(hub: FakeHub, tmp_path: Path) -> None:
    result = _publish(_package(tmp_path).root, create_pr=True, max_files_per_commit=4)
    assert result.status == "published", result.message
    repo = hub.repos[TARGET]
    assert hub.paths_at(TARGET, "main") == {".gitattributes"}
    assert repo.pulls == {1: result.commit}
    assert result.pull_request_url == f"{hub.url}/{TARGET}/discussions/1"
    assert_no_manifest_before_its_artifacts(hub, TARGET)


def test_a_branch_and_a_private_repo(hub: FakeHub, tmp_path: Path) -> None:
    result = _publish(_package(tmp_path).root, branch="staging", private=True)
    assert result.status == "published", result.message
    repo = hub.repos[TARGET]
    assert repo.private and repo.branches["staging"] == result.commit
    assert hub.paths_at(TARGET, "main") == {".gitattributes"}


def test_a_target_the_token_cannot_write_is_refused_before_certifying(
        hub: FakeHub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # issue 34: was "failed" after certifying the whole package; now asked first
    monkeypatch.setenv("HF_TOKEN", OUTSIDER)
    result = _publish(_package(tmp_path).root)
    assert result.status == "refused"
    assert "'bob' cannot create repos in 'meshllm'" in result.message
    assert OUTSIDER not in result.message
    assert result.local_report is None  # nothing hashed or certified
    assert hub.only_access_checks()


# --- the catalog --------------------------------------------------------------------------
@pytest.fixture
def catalog(hub: FakeHub) -> str:
    return hub.commit(CATALOG, {"README.md": b"# catalog\n"}, repo_type="dataset")


def _entry(hub: FakeHub, rev: str, path: str) -> dict[str, object]:
    return json.loads(hub.file_bytes(CATALOG, rev, path, repo_type="dataset"))


def _pinned(entry: dict[str, object]) -> list[tuple[str, str]]:
    variants = entry["variants"]
    assert isinstance(variants, dict)
    return [(p["repo"], p["revision"]) for v in variants.values() for p in v["packages"]]


def test_experimental_catalog_entry_is_a_pull_request_with_the_commit_pinned(
        hub: FakeHub, tmp_path: Path, catalog: str) -> None:
    info = _package(tmp_path)
    result = _publish(info.root, catalog=CATALOG, experimental=True)
    assert result.status == "published", result.message
    assert result.catalog is not None and result.catalog.pull_request_url is not None
    owner, name = info.manifest["source_model"]["repo"].split("/")
    path = f"entries/{owner}/{name}.json"
    assert result.catalog.path == path
    assert hub.datasets[CATALOG].branches["main"] == catalog  # nothing merged
    assert _pinned(_entry(hub, "refs/pr/1", path)) == [(TARGET, result.commit)]
    assert "- experimental" in hub.file_bytes(TARGET, "main", "README.md").decode()


def test_a_token_that_cannot_push_to_the_catalog_opens_a_pull_request(
        hub: FakeHub, tmp_path: Path, catalog: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_TOKEN", OUTSIDER)
    result = _publish(_package(tmp_path).root, target="bob/tiny-layers", catalog=CATALOG)
    assert result.status == "published", result.message
    assert result.catalog is not None and result.catalog.pull_request_url
    assert result.catalog.reason == "this token cannot push to the catalog"
    assert hub.datasets[CATALOG].discussions[0].author == "bob"
    assert hub.datasets[CATALOG].branches["main"] == catalog


def test_a_writer_commits_the_entry_and_a_republish_re_pins_it(
        hub: FakeHub, tmp_path: Path, catalog: str) -> None:
    info = _package(tmp_path)
    first = _publish(info.root, catalog=CATALOG)
    assert first.status == "published" and first.catalog is not None
    assert first.catalog.pull_request_url is None
    path = first.catalog.path
    assert _pinned(_entry(hub, "main", path)) == [(TARGET, first.commit)]
    (info.root / "notes.txt").write_text("not part of the package")
    hub.commit(TARGET, {"extra.txt": b"moves main"}, replace_all=False)
    again = _publish(info.root, catalog=CATALOG)
    assert again.status == "published" and again.commit != first.commit
    assert _pinned(_entry(hub, "main", path)) == [(TARGET, again.commit)]


def test_catalog_trouble_leaves_the_package_published_but_the_run_incomplete(
        hub: FakeHub, tmp_path: Path) -> None:
    result = _publish(_package(tmp_path).root, catalog="meshllm/no-such-catalog")
    assert result.status == "incomplete" and "catalog not updated" in result.message
    assert result.ref is not None and result.remote_report is not None
    assert result.remote_report.status == "passed"


def test_catalog_needs_a_source_repo_before_anything_is_sent(hub: FakeHub,
                                                             tmp_path: Path) -> None:
    info = _package(tmp_path)
    manifest = json.loads((info.root / "model-package.json").read_text())
    del manifest["source_model"]["repo"]
    (info.root / "model-package.json").write_text(json.dumps(manifest, indent=2))
    result = _publish(info.root, catalog=CATALOG)
    if result.local_report is not None and result.local_report.status != "passed":
        pytest.skip("a manifest without source repo no longer certifies")
    assert result.status == "refused" and "source_model.repo" in result.message
    assert hub.only_access_checks()
