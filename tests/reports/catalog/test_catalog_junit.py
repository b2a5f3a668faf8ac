"""The catalog report as JUnit XML: one test case per package reference, its outcome the
row's verdict, and one per entry file that could not be read."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from meshcert.reports.catalog.junit import render_catalog_junit
from tests.reports.catalog_fixture import CatalogOut
from tests.reports.junit_shape import outcome, validate


def test_one_case_per_package(catalog_out: CatalogOut) -> None:
    report = catalog_out.report
    root = validate(render_catalog_junit(report))
    packages, entries = root.findall("testsuite")
    assert packages.get("name") == "meshcert.catalog.packages"
    cases = packages.findall("testcase")
    assert len(cases) == len(report.packages) == 16
    outcomes = [outcome(c) for c in cases]
    assert outcomes.count("failure") == report.counts.failed
    assert outcomes.count("passed") == report.counts.passed
    assert root.get("failures") == str(report.counts.failed + 1)  # and the broken entry
    good = next(c for c in cases if "ns/good-v1@" in (c.get("name") or ""))
    assert good.get("classname") == "meshcert.catalog.entries/meshcert/tiny-llama.json"
    assert (good.get("name") or "").startswith("F16: hf://ns/good-v1@")
    out = good.find("system-out")
    assert out is not None and "cert.json: packages/ns/good-v1/" in (out.text or "")
    # the package's own verdict sentence, as `models certify` ends (issue 45)
    row = next(p for p in report.packages if p.repo == "ns/good-v1")
    assert row.certification is not None and row.certification.verdict
    assert (out.text or "").splitlines()[1] == row.certification.verdict
    gated = next(c for c in cases if "ns/gated" in (c.get("name") or ""))
    failure = gated.find("failure")
    assert failure is not None
    assert failure.get("message") == "2 error(s): catalog_package_gated, hub_gated"
    assert "remediation:" in (failure.text or "")
    assert "\ncertification failed" in (failure.text or "")
    [broken] = entries.findall("testcase")
    assert (broken.get("name"), outcome(broken)) == ("entries/broken/model.json", "failure")


def test_an_incomplete_package_is_an_error(catalog_out: CatalogOut) -> None:
    row = catalog_out.report.packages[1].model_copy(update={
        "status": "incomplete", "error_codes": ["hub_unreachable"]})
    report = catalog_out.report.model_copy(update={"packages": [row], "findings": []})
    root = ET.fromstring(render_catalog_junit(report))
    [case] = root.iter("testcase")
    assert outcome(case) == "error"
    error = case.find("error")
    assert error is not None and error.get("message") == ("could not certify everything: "
                                                           "hub_unreachable")


def test_a_catalog_wide_warning_is_not_an_unreadable_entry(catalog_out: CatalogOut) -> None:
    """It is listed among the catalog's findings, and fails nothing (the catalog's status does
    not count it either); an error about an entry that was read fails its own case."""
    from meshcert.core.findings import finding

    report = catalog_out.report.model_copy(update={"findings": [
        *catalog_out.report.findings,
        finding("catalog_mixed_mesh_llm_versions", "mixed: 0.76.0, 0.77.0"),
        finding("catalog_entry_invalid", "entries/meshcert/tiny-llama.json: source_repo 'x/y' "
                "does not match the file name", path="entries/meshcert/tiny-llama.json")]})
    root = validate(render_catalog_junit(report))
    _, entries, findings = root.findall("testsuite")
    assert [c.get("name") for c in entries.findall("testcase")] == ["entries/broken/model.json"]
    cases = {c.get("name"): outcome(c) for c in findings.findall("testcase")}
    assert cases == {"catalog_mixed_mesh_llm_versions: catalog": "passed",
                     "catalog_entry_invalid: entries/meshcert/tiny-llama.json": "failure"}
