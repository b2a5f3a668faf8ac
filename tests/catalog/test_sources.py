"""Where the entry files come from: a local checkout, and a dataset repo on the Hub read with
huggingface_hub at one pinned commit.

The dataset tests need the in-repo Hub to hold dataset repos (being added beside this work);
until `HubStore.commit` takes a `repo_type` they are skipped, and they run once it does.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from meshcert.catalog.report import CatalogOptions
from meshcert.catalog.run import CatalogRequest, certify_catalog
from meshcert.catalog.sources import (
    DEFAULT_CATALOG,
    CatalogError,
    HubDatasetCatalog,
    LocalCatalog,
    open_catalog,
    parse_dataset_ref,
)
from tests.support.catalog_packages import (
    RUNTIME_ABI,
    CatalogFixture,
    catalog_files,
    variant,
    write_entry,
)
from tests.support.hub_repo import HubStore
from tests.support.hub_server import FakeHub

DATASETS = "repo_type" in inspect.signature(HubStore.commit).parameters
needs_datasets = pytest.mark.skipif(not DATASETS, reason="the in-repo Hub cannot hold dataset "
                                    "repos yet (HubStore.commit has no repo_type)")
CATALOG_REPO = "meshllm/catalog"


# --- a local checkout -------------------------------------------------------------------------
def test_a_checkout_gives_every_entry_file(tmp_path: Path) -> None:
    write_entry(tmp_path, "meshcert/tiny-llama", {"F16": variant("ns/a")})
    write_entry(tmp_path, "other/model", {})
    (tmp_path / "README.md").write_text("not an entry")
    (tmp_path / "entries" / "notes.txt").write_text("not JSON")
    snapshot = LocalCatalog(tmp_path).snapshot()
    assert (snapshot.kind, snapshot.location, snapshot.revision) == ("local", str(tmp_path),
                                                                    None)
    assert sorted(snapshot.files) == ["entries/meshcert/tiny-llama.json",
                                      "entries/other/model.json"]
    assert json.loads(snapshot.files["entries/other/model.json"])["source_repo"] == "other/model"
    assert snapshot.findings == []


def test_misplaced_and_unreadable_files_are_findings(tmp_path: Path) -> None:
    entries = tmp_path / "entries"
    (entries / "a" / "b").mkdir(parents=True)
    (entries / "top.json").write_text("{}")
    (entries / "a" / "b" / "deep.json").write_text("{}")
    (entries / "a" / "big.json").write_bytes(b" " * ((1 << 20) + 1))
    (entries / "a" / "dir.json").mkdir()
    snapshot = LocalCatalog(tmp_path).snapshot()
    assert snapshot.files == {}
    assert [(f.code, f.path, f.message.split(": ", 1)[-1]) for f in snapshot.findings] == [
        ("catalog_entry_invalid", "entries/a/b/deep.json",
         "entries/a/b/deep.json is not at entries/<owner>/<repo>.json; it was not read"),
        ("catalog_entry_invalid", "entries/a/big.json",
         "1048577 bytes, over the 1048576 byte limit"),
        ("catalog_entry_invalid", "entries/a/dir.json", "not a regular file"),
        ("catalog_entry_invalid", "entries/top.json",
         "entries/top.json is not at entries/<owner>/<repo>.json; it was not read")]


def test_what_is_no_catalog_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="is not a directory"):
        LocalCatalog(tmp_path / "nowhere").snapshot()
    with pytest.raises(CatalogError, match="has no entries/ folder"):
        LocalCatalog(tmp_path).snapshot()
    with pytest.raises(CatalogError, match="hf://datasets/ns/name"):
        open_catalog("s3://bucket/catalog")
    assert isinstance(open_catalog(str(tmp_path)), LocalCatalog)


@pytest.mark.parametrize(("text", "parsed"), [
    (DEFAULT_CATALOG, ("meshllm/catalog", None)),
    ("hf://datasets/meshllm/catalog@" + "a" * 40, ("meshllm/catalog", "a" * 40)),
    ("hf://datasets/ns/cat@refs/pr/3", ("ns/cat", "refs/pr/3")),
])
def test_dataset_refs(text: str, parsed: tuple[str, str | None]) -> None:
    assert parse_dataset_ref(text) == parsed
    source = open_catalog(text, endpoint="http://127.0.0.1:9")
    assert isinstance(source, HubDatasetCatalog)
    assert (source.repo, source.revision) == parsed


@pytest.mark.parametrize(("text", "why"), [
    ("hf://meshllm/catalog", "a catalog on the Hub is a dataset repo"),
    ("hf://datasets/meshllm", "is not a dataset ref"),
    ("hf://datasets/a/b/c", "is not a dataset ref"),
    ("hf://datasets/a/b@", "is not a dataset ref"),
])
def test_bad_dataset_refs(text: str, why: str) -> None:
    with pytest.raises(CatalogError, match=why):
        parse_dataset_ref(text)


# --- a dataset repo on the Hub (the in-repo Hub, once it holds datasets) ---------------------
def publish_catalog(hub: FakeHub, root: Path) -> str:
    sha: str = hub.commit(CATALOG_REPO, catalog_files(root), repo_type="dataset")
    return sha


@needs_datasets
def test_the_dataset_is_read_at_one_commit(hub: FakeHub,
                                           published_catalog: CatalogFixture) -> None:
    sha = publish_catalog(hub, published_catalog.root)
    snapshot = open_catalog(f"hf://datasets/{CATALOG_REPO}").snapshot()
    assert (snapshot.kind, snapshot.location, snapshot.revision) == ("hf", CATALOG_REPO, sha)
    assert snapshot.files == {p: b for p, b in catalog_files(published_catalog.root).items()
                              if p.startswith("entries/")}
    pinned = open_catalog(f"hf://datasets/{CATALOG_REPO}@{sha}").snapshot()
    assert (pinned.revision, pinned.requested_revision) == (sha, sha)


@needs_datasets
def test_the_catalog_on_the_hub_gives_the_same_verdicts_as_its_checkout(
        hub: FakeHub, published_catalog: CatalogFixture) -> None:
    sha = publish_catalog(hub, published_catalog.root)
    request = CatalogRequest(options=CatalogOptions(runtime_abi=RUNTIME_ABI))
    local = certify_catalog(LocalCatalog(published_catalog.root), request).report
    hub.reset_counters()
    remote = certify_catalog(open_catalog(f"hf://datasets/{CATALOG_REPO}"), request).report
    assert remote.catalog.revision == sha and remote.catalog.kind == "hf"
    assert [(r.entry, r.variant, r.repo, r.status, r.error_codes, r.warning_codes)
            for r in remote.packages] == [
        (r.entry, r.variant, r.repo, r.status, r.error_codes, r.warning_codes)
        for r in local.packages]
    assert [f.path for f in remote.findings] == ["entries/broken/model.json"]
    # the packages cost what they cost from a checkout; the catalog's own reads come on top
    assert sum(r.requests for r in remote.packages) == sum(r.requests for r in local.packages)


@needs_datasets
def test_a_dataset_that_is_not_there_is_a_clear_error(hub: FakeHub) -> None:
    with pytest.raises(CatalogError, match="could not be read") as info:
        open_catalog("hf://datasets/nobody/nothing").snapshot()
    assert not info.value.incomplete


def test_an_unreachable_hub_leaves_the_catalog_unread_and_incomplete(hub: FakeHub) -> None:
    """Nothing listens on port 9: every attempt is refused, retried, then given up."""
    with pytest.raises(CatalogError, match="the catalog could not be read") as info:
        HubDatasetCatalog(DEFAULT_CATALOG, endpoint="http://127.0.0.1:9").snapshot()
    assert info.value.incomplete
    assert len(hub.sleeps) >= 4  # the backoff between the attempts (recorded, not slept)
