"""--since REPORT.json: only the packages whose commit moved are certified again, and the
report says what changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meshcert.catalog.report import CatalogOptions, CatalogReport
from meshcert.catalog.run import (
    RESOLVE_REQUESTS,
    CatalogRequest,
    certify_catalog,
    request_budget,
)
from meshcert.catalog.since import Previous, load_previous
from meshcert.catalog.sources import CatalogError, LocalCatalog
from tests.support.catalog_packages import (
    RUNTIME_ABI,
    CatalogFixture,
    artifact_count,
    variant,
    write_entry,
)
from tests.support.hub_server import FakeHub

OPTIONS = CatalogOptions(runtime_abi=RUNTIME_ABI)


def certify(catalog: Path, previous: CatalogReport | None = None,
            options: CatalogOptions = OPTIONS) -> CatalogReport:
    request = CatalogRequest(options=options, previous=Previous.of(
        previous, "before.json", options) if previous is not None else None)
    return certify_catalog(LocalCatalog(catalog), request).report


def test_only_a_moved_package_is_certified_again(hub: FakeHub,
                                                 published_catalog: CatalogFixture) -> None:
    before = certify(published_catalog.root)
    moved = published_catalog.roots["ns/good-v2"]
    (moved / "NOTES.md").write_text("a new commit\n")
    new_sha = hub.publish_dir("ns/good-v2", moved)
    hub.reset_counters()
    after = certify(published_catalog.root, before)
    rows = {(r.variant, r.repo): r for r in after.packages}
    changed = rows[("F16", "ns/good-v2")]
    assert (changed.change, changed.revision, changed.previous_revision) == (
        "changed", new_sha, published_catalog.shas["ns/good-v2"])
    assert changed.requests == request_budget(artifact_count(moved), pinned=False)
    pinned = rows[("F16", "ns/good-v1")]
    assert (pinned.change, pinned.requests) == ("unchanged", 0)  # no request at all
    unpinned = rows[("F16", "ns/tampered-v1")]
    assert (unpinned.change, unpinned.requests) == ("unchanged", RESOLVE_REQUESTS)
    # a re-used row keeps its verdict, codes and facts
    assert (unpinned.status, unpinned.error_codes) == ("failed", ["hub_sha256_mismatch"])
    missing = rows[("F16", "ns/missing")]
    assert missing.change == "retried"  # no commit now, none before: asked again
    assert after.since is not None
    assert after.since.model_dump() == {
        "report": "before.json", "previous_catalog_revision": None, "new": 0,
        "changed": 1, "unchanged": 13, "retried": 1, "removed": []}
    assert after.counts.certified == 1
    assert sum(r.requests for r in after.packages) == hub.count()
    assert [(r.status, r.error_codes) for r in after.packages] == [
        (r.status, r.error_codes) for r in before.packages]


def test_new_and_removed_references_are_named(hub: FakeHub, tmp_path: Path,
                                              published_catalog: CatalogFixture) -> None:
    first = tmp_path / "first"
    write_entry(first, "meshcert/tiny-llama", {"F16": variant("ns/good-v1", "ns/wrong-bytes")})
    before = certify(first)
    second = tmp_path / "second"
    write_entry(second, "meshcert/tiny-llama", {"F16": variant("ns/good-v1", "ns/good-v2")})
    after = certify(second, before)
    assert [(r.repo, r.change) for r in after.packages] == [("ns/good-v1", "unchanged"),
                                                           ("ns/good-v2", "new")]
    assert after.since is not None
    assert after.since.removed == ["entries/meshcert/tiny-llama.json F16 ns/wrong-bytes"]


def test_other_options_or_an_incomplete_row_are_certified_again(
        hub: FakeHub, tmp_path: Path, published_catalog: CatalogFixture) -> None:
    catalog = tmp_path / "catalog"
    write_entry(catalog, "meshcert/tiny-llama", {"F16": variant("ns/good-v1", "ns/good-v2")})
    hub.inject("model_info", 503, times=None, path_contains="/ns/good-v2/")
    before = certify(catalog)
    assert [r.status for r in before.packages] == ["passed", "incomplete"]
    hub.clear_faults()
    after = certify(catalog, before)
    assert [(r.change, r.status) for r in after.packages] == [("unchanged", "passed"),
                                                             ("retried", "passed")]
    strict = certify(catalog, after, CatalogOptions(runtime_abi=RUNTIME_ABI, strict=True))
    assert [r.change for r in strict.packages] == ["retried", "retried"]
    assert all(r.requests > 0 for r in strict.packages)


def test_a_bad_previous_report_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(CatalogError, match="cannot be read"):
        load_previous(str(tmp_path / "none.json"))
    (tmp_path / "not.json").write_text("{")
    with pytest.raises(CatalogError, match="is not a meshcert catalog report"):
        load_previous(str(tmp_path / "not.json"))
    (tmp_path / "cert.json").write_text(json.dumps({"schema_version": 1, "status": "passed"}))
    with pytest.raises(CatalogError, match="is not a meshcert catalog report"):
        load_previous(str(tmp_path / "cert.json"))


def test_a_report_round_trips_through_its_json(hub: FakeHub,
                                               published_catalog: CatalogFixture,
                                               tmp_path: Path) -> None:
    report = certify(published_catalog.root)
    path = tmp_path / "catalog.json"
    path.write_text(report.to_json())
    assert load_previous(str(path)) == report
