"""Every renderer says which package format was certified and, for v2, its package id."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.reports.certification.html import render_cert_html
from meshcert.reports.certification.junit import render_cert_junit
from meshcert.reports.certification.markdown import render_cert_markdown
from tests.certify.v2_packages import build_v2
from tests.conftest import certify_dir


@pytest.fixture(scope="module")
def v2_report(tmp_path_factory: pytest.TempPathFactory) -> CertReport:
    return certify_dir(build_v2(tmp_path_factory.mktemp("v2")).root)


@pytest.mark.parametrize("render", [render_cert_html, render_cert_markdown, render_cert_junit])
def test_renderers_show_format_and_package_id(v2_report: CertReport, render: object) -> None:
    text = render(v2_report)  # type: ignore[operator]
    assert v2_report.package_id is not None and v2_report.package_id in text
    assert "v2" in text


def test_cert_json_carries_format_and_id(v2_report: CertReport, tmp_path: Path) -> None:
    data = v2_report.model_dump()
    assert data["package_format"] == "v2"
    assert data["package_id"].startswith("sha256:")
