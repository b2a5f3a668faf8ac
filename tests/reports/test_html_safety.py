"""HTML reports are inert (escaped report text) and self-contained (no scripts, no URLs)."""

from __future__ import annotations

import pytest

from meshcert.certify.report import CertReport
from meshcert.reports.certification.html import render_cert_html
from tests.reports.checks_html import (
    assert_inert,
    assert_responsive_and_printable,
    assert_self_contained,
)
from tests.reports.conftest import HOSTILE


@pytest.mark.parametrize("kind", ["passed", "failed", "hostile", "runtime", "incomplete"])
def test_cert_html_is_self_contained(cert_reports: dict[str, CertReport], kind: str) -> None:
    html = render_cert_html(cert_reports[kind])
    page = assert_self_contained(html)
    assert_responsive_and_printable(page, html)


def test_cert_html_escapes_model_id_manifest_strings_and_messages(
        hostile_report: CertReport) -> None:
    assert hostile_report.model_id == HOSTILE
    html = render_cert_html(hostile_report)
    assert_inert(html, HOSTILE)


def test_hostile_text_in_every_field_kind(passed_report: CertReport) -> None:
    """Stage ids, part paths, gate names, measurements, check names: all escaped."""
    stage = passed_report.materialized_stages[0]
    part = stage.parts[0].model_copy(update={"path": HOSTILE, "role": HOSTILE})
    gate = passed_report.runtime_gates[0].model_copy(update={
        "name": HOSTILE, "details": HOSTILE, "latency_ms": 1.0, "measurements": {HOSTILE: 1}})
    finding = passed_report.findings[0].model_copy(update={
        "code": HOSTILE, "message": HOSTILE, "path": HOSTILE, "remediation": HOSTILE,
        "check": HOSTILE}) if passed_report.findings else None
    report = passed_report.model_copy(update={
        "materialized_stages": [stage.model_copy(update={"stage_id": HOSTILE,
                                                         "parts": [part]})],
        "runtime_gates": [gate],
        "manifest_sha256": HOSTILE, "input": HOSTILE, "started_at": HOSTILE,
        "findings": [finding] if finding else [],
    })
    html = render_cert_html(report)
    assert_inert(html, HOSTILE)
    assert_self_contained(html)
