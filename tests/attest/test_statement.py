"""The statement made from a report: subjects from verified digests, the VSA predicate, and
which reports are never signed."""

from __future__ import annotations

import pytest

from meshcert.attest.statement import (
    MANIFEST_NAME,
    PACKAGE_LEVEL,
    REPORT_EXTENSION,
    STATEMENT_TYPE,
    VSA_PREDICATE,
    StatementError,
    VerdictOptions,
    build_statement,
    canonical_json,
    parse_statement,
    subjects_of,
    unattestable_reason,
)
from meshcert.certify.report import CertReport, CertScope
from tests.conftest import PackageFactory, certify_dir


@pytest.fixture
def passed(packages: PackageFactory) -> CertReport:
    report = certify_dir(packages.build("llama").root)
    assert report.status == "passed"
    return report


def test_one_subject_per_declared_artifact_plus_the_manifest(passed: CertReport) -> None:
    subjects = subjects_of(passed)
    assert [s.name for s in subjects] == [MANIFEST_NAME, *passed.declared_artifacts]
    assert subjects[0].sha256 == passed.manifest_sha256
    assert {s.name: s.sha256 for s in subjects[1:]} == passed.digests


def test_subject_digests_are_the_verified_ones_never_the_manifest_s(passed: CertReport) -> None:
    path = passed.declared_artifacts[0]
    # what certification hashed differs from what a manifest could claim: the hash wins
    report = passed.model_copy(update={"digests": {**passed.digests, path: "ab" * 32}})
    assert {s.name: s.sha256 for s in subjects_of(report)}[path] == "ab" * 32


def test_hub_attested_digests_count_as_verified(passed: CertReport) -> None:
    report = passed.model_copy(update={"digests": {}, "hub_digests": dict(passed.digests),
                                       "verification": "hub-attested"})
    assert unattestable_reason(report) is None
    assert {s.name: s.sha256 for s in subjects_of(report)[1:]} == passed.digests


def test_the_predicate_of_a_passed_report(passed: CertReport) -> None:
    statement = build_statement(passed, report_sha256="cd" * 32, verifier_id="urn:x",
                                options=VerdictOptions(source=True))
    assert statement["_type"] == STATEMENT_TYPE and statement["predicateType"] == VSA_PREDICATE
    predicate = statement["predicate"]
    assert predicate["verificationResult"] == "PASSED"
    assert predicate["verifiedLevels"] == [PACKAGE_LEVEL, "MESHCERT_SOURCE_VERIFIED_V1"]
    assert predicate["timeVerified"] == passed.finished_at
    assert predicate["resourceUri"] == passed.input
    assert predicate["verifier"]["id"] == "urn:x"
    assert predicate["verifier"]["version"]["meshcert"] == passed.tool.version
    assert predicate[REPORT_EXTENSION]["report_sha256"] == "cd" * 32
    assert predicate[REPORT_EXTENSION]["status"] == "passed"
    assert len(predicate["policy"]["digest"]["sha256"]) == 64


def test_the_policy_digest_changes_with_the_verdict_options(passed: CertReport) -> None:
    def digest(options: VerdictOptions) -> str:
        return str(build_statement(passed, report_sha256="", verifier_id="v", options=options
                                   )["predicate"]["policy"]["digest"]["sha256"])

    assert digest(VerdictOptions()) == digest(VerdictOptions())
    assert digest(VerdictOptions()) != digest(VerdictOptions(strict=True))


def test_a_failed_report_is_failed_with_its_error_codes(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m.update(format="nope"))
    report = certify_dir(info.root)
    assert report.status == "failed" and unattestable_reason(report) is None
    predicate = build_statement(report, report_sha256="", verifier_id="v")["predicate"]
    assert predicate["verificationResult"] == "FAILED"
    assert predicate["verifiedLevels"] == ["FAILED"]
    assert "invalid_format" in predicate[REPORT_EXTENSION]["errors"]


def test_reports_that_are_never_signed(passed: CertReport) -> None:
    assert unattestable_reason(passed.model_copy(update={"status": "incomplete"})) == \
        "the certification is incomplete"
    scope = CertScope(layer_start=0, layer_end=2)
    assert "slice" in str(unattestable_reason(passed.model_copy(update={"scope": scope})))
    assert "--no-verify-sha256" in str(unattestable_reason(passed.model_copy(
        update={"verification": "size-only", "digests": {}})))
    missing = dict(passed.digests)
    missing.pop(passed.declared_artifacts[-1])
    assert unattestable_reason(passed.model_copy(update={"digests": missing})) == \
        f"1 artifact digest(s) were not verified: {passed.declared_artifacts[-1]}"


def test_a_statement_reads_back(passed: CertReport) -> None:
    statement = parse_statement(canonical_json(build_statement(
        passed, report_sha256="", verifier_id="v")))
    assert statement.result == "PASSED" and statement.verifier_id == "v"
    assert statement.subjects[MANIFEST_NAME] == passed.manifest_sha256


@pytest.mark.parametrize(("payload", "says"), [
    (b"\xff", "not UTF-8 JSON"),
    (b"[]", "$._type"),
    (b'{"_type": "https://in-toto.io/Statement/v0.1"}', "$._type"),
    (b'{"_type": "https://in-toto.io/Statement/v1", "predicateType": "x"}', "predicateType"),
    (b'{"_type": "https://in-toto.io/Statement/v1", "predicateType": '
     b'"https://slsa.dev/verification_summary/v1", "predicate": {}, "subject": [{"name": 1}]}',
     "$.subject[0]"),
    (b'{"_type": "https://in-toto.io/Statement/v1", "predicateType": '
     b'"https://slsa.dev/verification_summary/v1", "predicate": {}, "subject": []}',
     "verificationResult"),
])
def test_what_is_not_a_vsa_statement(payload: bytes, says: str) -> None:
    with pytest.raises(StatementError, match=says.replace("$", r"\$").replace("[", r"\[")):
        parse_statement(payload)


