"""A reference vs its package, as pure functions: the catalog findings, mesh-llm's expected
verdict, and how they make the row's status."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.catalog.compare import (
    Resolution,
    build_row,
    fact_findings,
    row_status,
    summarize,
)
from meshcert.catalog.entries import PackageReference, VariantSource
from meshcert.catalog.report import CatalogOptions, Certification, PackageFacts
from meshcert.certify.report import CertReport, Gate, ToolInfo
from meshcert.certify.verdict import verdict
from meshcert.core.findings import finding

ENTRY = "entries/meshcert/tiny-llama.json"
SHA = "c" * 40
OPTIONS = CatalogOptions(runtime_abi="0.1.54")


def reference(**fields: Any) -> PackageReference:
    fields.setdefault("source", VariantSource(repo="meshcert/tiny-llama",
                                              file="tiny-llama-F16.gguf"))
    return PackageReference(entry=ENTRY, variant="F16", index=0, repo="ns/pkg", **fields)


def facts(**fields: Any) -> PackageFacts:
    base: dict[str, Any] = dict(format="v2", layer_count=4, total_bytes=1000, artifacts=6,
                                source_repo="meshcert/tiny-llama", source_revision="main",
                                source_file="tiny-llama-F16.gguf", producer_abi="0.1.54")
    return PackageFacts(**(base | fields))


def report(status: str = "passed", *codes: str) -> CertReport:
    return CertReport(status=status, input=f"hf://ns/pkg@{SHA}",  # type: ignore[arg-type]
                      package_gate=Gate(name="package_materialization", status="passed"),
                      tool=ToolInfo(version="test"), started_at="t", finished_at="t",
                      findings=[finding(code, f"{code} found") for code in codes])


def codes_of(found: list[Any]) -> list[str]:
    return [f.code for f in found]


def test_an_entry_that_agrees_with_its_package_has_no_findings() -> None:
    assert fact_findings(reference(layer_count=4, total_bytes=1000, source_revision="main"),
                         facts()) == []
    assert fact_findings(reference(), facts(layer_count=None, total_bytes=None)) == []


def test_recorded_numbers_must_match_the_package() -> None:
    found = fact_findings(reference(layer_count=5, total_bytes=999), facts())
    assert codes_of(found) == ["catalog_layer_count_mismatch", "catalog_total_bytes_mismatch"]
    assert all(f.path == ENTRY and f.severity == "error" for f in found)
    assert found[1].message == (f"{ENTRY} variant 'F16' packages[0]: the entry records "
                                "total_bytes 999, the package's artifacts declare 1000")


@pytest.mark.parametrize(("recorded", "actual", "disagree"), [
    ("a" * 40, "b" * 40, True), ("A" * 40, "a" * 40, False), ("main", "v2", True),
    ("main", "main", False), ("a" * 40, "main", False), ("main", "a" * 40, False)])
def test_source_revisions_are_compared_when_comparable(recorded: str, actual: str,
                                                       disagree: bool) -> None:
    found = fact_findings(reference(source_revision=recorded), facts(source_revision=actual))
    assert codes_of(found) == (["catalog_source_revision_mismatch"] if disagree else [])


def test_the_variant_source_revision_is_compared_too() -> None:
    ref = reference(source=VariantSource(repo="meshcert/tiny-llama", revision="a" * 40))
    [found] = fact_findings(ref, facts(source_revision="b" * 40))
    assert found.code == "catalog_source_revision_mismatch"
    assert "the variant's source.revision" in found.message


def test_a_package_from_another_source_is_a_mismatch() -> None:
    ref = reference(source=VariantSource(repo="someone/other", file="dir/other.gguf"))
    assert codes_of(fact_findings(ref, facts())) == ["catalog_source_mismatch"] * 2
    same = reference(source=VariantSource(repo="MESHCERT/tiny-llama",
                                          file="x/tiny-llama-F16.gguf"))
    assert fact_findings(same, facts()) == []


def test_mesh_llm_verdicts() -> None:
    accepted = summarize(report(), facts(), OPTIONS)
    assert (accepted.mesh_verdict, accepted.mesh_reasons) == ("accepts", ())
    parts = summarize(report("passed", "mesh_certify_would_fail"), facts(), OPTIONS)
    assert parts.mesh_verdict == "refuses"
    assert parts.mesh_reasons == ("mesh_certify_would_fail: mesh_certify_would_fail found",)
    abi = summarize(report(), facts(producer_abi="0.1.53"), OPTIONS)
    assert abi.mesh_verdict == "refuses" and abi.mesh_reasons[0].startswith(
        "producer ABI 0.1.53 is not the runtime's 0.1.54")
    # a v1 package's ABI is judged by the compatibility rule, not the string compare
    assert summarize(report(), facts(format="v1", producer_abi="0.1.53"),
                     OPTIONS).mesh_verdict == "accepts"
    # without a runtime ABI the compare cannot be predicted
    assert summarize(report(), facts(producer_abi="0.1.53"),
                     CatalogOptions()).mesh_verdict == "accepts"
    broken = summarize(report("failed", "artifact_sha256_mismatch"), facts(), OPTIONS)
    assert broken.mesh_verdict == "refuses"
    meshcert_only = summarize(report("failed", "tensor_in_wrong_layer"), facts(), OPTIONS)
    assert (meshcert_only.mesh_verdict, meshcert_only.mesh_reasons) == ("unknown", ())


def test_summarize_keeps_the_package_codes_and_counts() -> None:
    package = report("failed", "hub_sha256_mismatch", "hub_sha256_mismatch", "readme_missing")
    cert = summarize(package, None, OPTIONS).certification
    assert cert == Certification(status="failed", error_codes=["hub_sha256_mismatch"],
                                 warning_codes=["readme_missing"], errors=2, warnings=1,
                                 verdict=verdict(package).sentence())
    # the row states the one sentence `models certify` ends with (issue 45)
    assert cert.verdict is not None
    assert cert.verdict.startswith("certification failed: 2 errors, 1 warning, ")


def test_a_row_combines_the_package_and_the_catalog() -> None:
    pinned = reference(revision=SHA)
    row = build_row(pinned, Resolution(SHA, "entry"), summarize(report(), facts(), OPTIONS),
                    OPTIONS)
    assert (row.status, row.findings, row.revision_source) == ("passed", [], "entry")
    unpinned = build_row(reference(), Resolution(SHA, "resolved"),
                         summarize(report(), facts(), OPTIONS), OPTIONS)
    assert codes_of(unpinned.findings) == ["catalog_entry_unpinned"]
    assert unpinned.findings[0].message.endswith(f"commit {SHA} was certified")
    assert unpinned.status == "passed" and unpinned.warnings == 1
    moving = build_row(reference(revision="main"), Resolution(SHA, "resolved"),
                       summarize(report(), facts(), OPTIONS), OPTIONS)
    assert "revision 'main' is not a 40-hex commit id" in moving.findings[0].message


def test_a_package_mesh_llm_refuses_is_flagged_only_when_meshcert_passes_it() -> None:
    ref = reference(revision=SHA)
    passed = build_row(ref, Resolution(SHA, "entry"), summarize(
        report("passed", "mesh_certify_would_fail"), facts(), OPTIONS), OPTIONS)
    assert codes_of(passed.findings) == ["catalog_mesh_llm_would_refuse"]
    assert passed.warning_codes == ["catalog_mesh_llm_would_refuse", "mesh_certify_would_fail"]
    failed = build_row(ref, Resolution(SHA, "entry"), summarize(
        report("failed", "hub_sha256_mismatch"), facts(), OPTIONS), OPTIONS)
    assert failed.findings == [] and failed.mesh_llm_verdict == "refuses"


@pytest.mark.parametrize(("code", "catalog_code"), [
    ("hub_repo_not_found", "catalog_package_missing"),
    ("hub_revision_not_found", "catalog_package_missing"),
    ("hub_disabled", "catalog_package_missing"),
    ("hub_unauthorized", "catalog_package_missing"),
    ("hub_gated", "catalog_package_gated"),
    ("missing_manifest", "catalog_package_unreadable"),
    ("invalid_manifest_json", "catalog_package_unreadable"),
    ("manifest_too_large", "catalog_package_unreadable"),
    ("unsupported_schema_version", "catalog_package_unreadable")])
def test_what_the_hub_or_the_package_says_becomes_a_catalog_finding(code: str,
                                                                   catalog_code: str) -> None:
    row = build_row(reference(revision=SHA), Resolution(SHA, "entry"),
                    summarize(report("failed", code), None, OPTIONS), OPTIONS)
    assert codes_of(row.findings) == [catalog_code]
    assert row.status == "failed" and code in row.error_codes


def test_a_repo_that_cannot_be_resolved_is_a_row_without_a_certification() -> None:
    missing = build_row(reference(), Resolution(None, None, finding(
        "hub_repo_not_found", "model_info ns/pkg: HTTP 404")), None, OPTIONS)
    assert codes_of(missing.findings) == ["catalog_entry_unpinned", "hub_repo_not_found",
                                          "catalog_package_missing"]
    assert (missing.status, missing.certification, missing.mesh_llm_verdict) == (
        "failed", None, "refuses")
    assert missing.findings[1].path == ENTRY
    down = build_row(reference(), Resolution(None, None, finding(
        "hub_unreachable", "model_info ns/pkg: HTTP 503 (gave up after 5 attempts)")), None,
        OPTIONS)
    assert (down.status, down.mesh_llm_verdict) == ("incomplete", "unknown")


def test_duplicates_and_bad_fields_fail_the_row() -> None:
    other = PackageReference(entry="entries/x/y.json", variant="Q8", index=2, repo="ns/pkg")
    problem = finding("catalog_entry_invalid", f"{ENTRY}: layer_count must be ...", path=ENTRY)
    ref = reference(revision=SHA, problems=(problem,))
    row = build_row(ref, Resolution(SHA, "entry"), summarize(report(), facts(), OPTIONS),
                    OPTIONS, duplicate_of=[other])
    assert codes_of(row.findings) == ["catalog_entry_invalid", "catalog_package_duplicate"]
    assert row.findings[1].message.endswith("also listed at entries/x/y.json variant 'Q8' "
                                            "packages[2]")
    assert row.status == "failed"


def test_row_status_rules() -> None:
    ok = Certification(status="passed")
    warned = Certification(status="passed", warnings=1, warning_codes=["readme_missing"])
    unpinned = [finding("catalog_entry_unpinned", "no revision")]
    assert row_status(ok, [], strict=False) == "passed"
    assert row_status(ok, unpinned, strict=False) == "passed"
    assert row_status(ok, unpinned, strict=True) == "failed"
    assert row_status(warned, [], strict=True) == "failed"
    assert row_status(Certification(status="incomplete"), [], strict=False) == "incomplete"
    assert row_status(None, [finding("hub_unreachable", "down")], strict=False) == "incomplete"
    assert row_status(None, [], strict=False) == "incomplete"
    assert row_status(ok, [finding("catalog_package_duplicate", "twice"),
                           finding("hub_unreachable", "down")], strict=False) == "failed"
