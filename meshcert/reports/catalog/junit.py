"""The catalog report as JUnit XML: one test case per package reference (failed -> <failure>,
incomplete -> <error>, warnings in <system-out>), one per entry file that could not be read,
and one per other catalog finding (a failure only when it is an error, as the catalog's status
counts it), so a CI dashboard lists every package of the catalog."""

from __future__ import annotations

from meshcert.catalog.report import CatalogPackage, CatalogReport
from meshcert.reports.catalog.view import unreadable_entries
from meshcert.reports.certification.junit import finding_text
from meshcert.reports.junitxml import Case, Suite, junit_timestamp, to_xml

CLASSNAME = "meshcert.catalog"


def _package_case(row: CatalogPackage) -> Case:
    ref = f"hf://{row.repo}@{row.revision}" if row.revision else f"hf://{row.repo}"
    case = Case(name=f"{row.variant}: {ref}", classname=f"{CLASSNAME}.{row.entry}")
    cert = row.certification
    lines = [f"verdict: {row.status}; package: {cert.status if cert else 'not certified'}; "
             f"mesh-llm: {row.mesh_llm_verdict}"]
    if cert is not None and cert.verdict:  # the package's own sentence, as models certify ends
        lines.append(cert.verdict)
    lines += [f"mesh-llm: {reason}" for reason in row.mesh_llm_reasons]
    if row.cert_json:
        lines.append(f"cert.json: {row.cert_json}")
    body = "\n".join(lines + ([finding_text(row.findings)] if row.findings else []))
    if row.status == "failed":
        case.outcome, case.type = "failure", "meshcert.package_failed"
        case.message = f"{row.errors} error(s): {', '.join(row.error_codes)}"
        case.body = body
    elif row.status == "incomplete":
        case.outcome, case.type = "error", "meshcert.incomplete"
        case.message = "could not certify everything: " + (", ".join(row.error_codes)
                                                           or "not certified")
        case.body = body
    else:
        case.system_out = body
    return case


def catalog_suites(report: CatalogReport) -> list[Suite]:
    properties = {k: v for k, v in {
        "status": report.status, "catalog": report.catalog.input,
        "catalog_revision": report.catalog.revision, "runtime_abi": report.options.runtime_abi,
        "tool": f"{report.tool.name} {report.tool.version}"}.items() if v is not None}
    packages = Suite("meshcert.catalog.packages", junit_timestamp(report.started_at), properties)
    packages.cases = [_package_case(row) for row in report.packages]
    suites = [packages]
    unreadable = unreadable_entries(report)
    if unreadable:
        entries = Suite("meshcert.catalog.entries", junit_timestamp(report.started_at))
        for f in report.findings:
            if f.path in unreadable:
                entries.cases.append(Case(
                    name=f.path or "catalog", classname=f"{CLASSNAME}.entries",
                    outcome="failure", type="meshcert.entry_invalid", message=f.code,
                    body=finding_text([f])))
        suites.append(entries)
    wide = [f for f in report.findings if f.path not in unreadable]
    if wide:  # an error fails the catalog, as its status says; a warning or note does not
        findings = Suite("meshcert.catalog.findings", junit_timestamp(report.started_at))
        for f in wide:
            case = Case(name=f"{f.code}: {f.path or 'catalog'}",
                        classname=f"{CLASSNAME}.findings")
            if f.severity == "error":
                case.outcome, case.type, case.message = "failure", f"meshcert.{f.code}", f.code
                case.body = finding_text([f])
            else:
                case.system_out = finding_text([f])
            findings.cases.append(case)
        suites.append(findings)
    return suites


def render_catalog_junit(report: CatalogReport) -> str:
    return to_xml(f"meshcert catalog certification: {report.catalog.input}",
                  catalog_suites(report))
