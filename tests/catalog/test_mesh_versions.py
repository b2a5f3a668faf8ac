"""Catalog certify: each package's mesh-llm need and shipped defaults (from its manifest, real
tiny packages), and the catalog-level warning when the needs differ (mesh-llm-0.79.md §4)."""

from __future__ import annotations

from pathlib import Path

from meshcert.catalog.facts import package_facts
from meshcert.catalog.mesh_versions import mixed_version_findings
from meshcert.catalog.report import CatalogPackage, PackageFacts
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions
from meshcert.reports.catalog.view import shipped_defaults
from tests.certify.publisher_packages import add_publisher_files, build_published
from tests.certify.v2_packages import build_v1, build_v2, edit_manifest


def facts_of(root: Path) -> PackageFacts:
    view = load_local_package(str(root), display_ref=str(root), options=CertOptions())
    facts = package_facts(view)
    assert facts is not None
    return facts


def row(repo: str, facts: PackageFacts | None) -> CatalogPackage:
    return CatalogPackage(entry=f"entries/{repo}.json", variant="F16", index=0, repo=repo,
                          status="passed", facts=facts)


def test_facts_name_the_release_and_the_defaults(tmp_path: Path) -> None:
    facts = facts_of(build_published(tmp_path).root)
    assert (facts.mesh_llm_minimum, facts.kv_cache_type, facts.compute_dtype) == \
        ("0.77.0", "f16", "bf16")
    assert facts.request_profiles == [] and facts.default_profile is None


def test_facts_list_the_request_profiles(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, lambda m: m.update(generation={"request_defaults": {
        "selection": {"default": "chat"}, "profiles": {"chat": {}, "code": {}}}}))
    facts = facts_of(pkg.root)
    assert facts.mesh_llm_minimum == "0.78.1"
    assert (facts.request_profiles, facts.default_profile) == (["chat", "code"], "chat")
    assert shipped_defaults(row("ns/p", facts)) == "KV f16 \u00b7 profiles: chat*, code"


def test_v1_facts_have_no_release(tmp_path: Path) -> None:
    facts = facts_of(build_v1(tmp_path).root)
    assert facts.mesh_llm_minimum is None and facts.kv_cache_type is None
    assert shipped_defaults(row("ns/v1", facts)) == ""


def test_a_catalog_with_one_need_has_no_warning() -> None:
    rows = [row("ns/a", PackageFacts(mesh_llm_minimum="0.76.0")),
            row("ns/b", PackageFacts(mesh_llm_minimum="0.76.0")), row("ns/v1", PackageFacts()),
            row("ns/broken", None)]
    assert mixed_version_findings(rows) == []


def test_a_catalog_mixing_needs_is_warned(tmp_path: Path) -> None:
    base = facts_of(build_v2(tmp_path / "base").root)
    published = facts_of(add_publisher_files(build_v2(tmp_path / "pub"), {}, defaults={}).root)
    assert (base.mesh_llm_minimum, published.mesh_llm_minimum) == ("0.76.0", "0.77.0")
    findings = mixed_version_findings([row("ns/new", published), row("ns/old", base),
                                       row("ns/old-copy", base)])
    assert [(f.code, f.severity) for f in findings] == [
        ("catalog_mixed_mesh_llm_versions", "warning")]
    assert findings[0].message == (
        "the catalog mixes packages that need different mesh-llm releases: >= 0.76.0: 2 "
        "package(s) (ns/old, ns/old-copy); >= 0.77.0: 1 package(s) (ns/new). Nodes older than "
        "0.77.0 cannot load every package.")
