"""Loading either report kind from JSON, and clear errors for anything else."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.evidence.report import EvidenceReport
from meshcert.reports.loader import ReportLoadError, detect_kind, load_report


def test_loads_both_kinds(tmp_path: Path, failed_report: CertReport,
                          evidence_reports: dict[str, EvidenceReport]) -> None:
    cert = tmp_path / "cert.json"
    cert.write_text(failed_report.to_json())
    assert load_report(cert) == failed_report
    evidence = tmp_path / "decisions.json"
    evidence.write_text(evidence_reports["example"].to_json())
    loaded = load_report(evidence)
    assert isinstance(loaded, EvidenceReport) and loaded == evidence_reports["example"]


@pytest.mark.parametrize(("content", "message"), [
    ('{"hello": 1}', "not a meshcert report"),
    ("[1, 2]", "expected a JSON object"),
    ("{not json", "is not valid JSON"),
    ('{"package_gate": {}, "status": "passed"}', "invalid certification report"),
    ('{"decisions": [{"policy": 1}]}', "invalid evidence report"),
    ("\xff\xfe", "is not valid JSON"),
])
def test_clear_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "report.json"
    path.write_bytes(content.encode("latin-1"))
    with pytest.raises(ReportLoadError, match=message) as info:
        load_report(path)
    assert str(path) in str(info.value)


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ReportLoadError, match="cannot read"):
        load_report(tmp_path / "absent.json")
    with pytest.raises(ReportLoadError, match="cannot read"):
        load_report(tmp_path)


def test_detect_kind() -> None:
    assert detect_kind({"package_gate": {}}) == "cert"
    assert detect_kind({"decisions": []}) == "evidence"
    with pytest.raises(ReportLoadError):
        detect_kind(json.loads('"text"'))


def test_validation_errors_are_summarised(tmp_path: Path, failed_report: CertReport) -> None:
    data = json.loads(failed_report.to_json())
    for f in data["findings"]:
        f["severity"] = "fatal"
    path = tmp_path / "cert.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ReportLoadError) as info:
        load_report(path)
    text = str(info.value)
    assert "findings.0.severity" in text and "more" in text
    assert len(text.splitlines()) <= 8
