"""SARIF 2.1.0 output of certify and inspect, validated against the official OASIS schema."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.cli import app
from meshcert.core.codes import CODES
from meshcert.reports.certification.sarif import build_sarif
from tests.conftest import PackageFactory
from tests.core.gguf.ggufbuild import layer_rel, load, write_raw
from tests.core.gguf.hostile import CORPUS, write_case

SCHEMA_FILE = Path(__file__).parents[1] / "data" / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"
runner = CliRunner()


def validate(doc: dict[str, Any]) -> None:
    raw = SCHEMA_FILE.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256  # the vendored file is untouched
    schema = json.loads(raw)
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(doc)


def test_the_schema_rejects_a_broken_document() -> None:
    """The validator really checks something: a result without a message is refused."""
    doc = {"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}},
                                         "results": [{"ruleId": "x"}]}]}
    with pytest.raises(jsonschema.ValidationError):
        validate(doc)


def test_failed_report_one_result_per_finding(failed_report: CertReport) -> None:
    doc = build_sarif(failed_report)
    validate(doc)
    [run] = doc["runs"]
    assert len(run["results"]) == len(failed_report.findings)
    rules = run["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} == {f.code for f in failed_report.findings}
    for result, f in zip(run["results"], failed_report.findings, strict=True):
        assert result["ruleId"] == f.code and rules[result["ruleIndex"]]["id"] == f.code
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[
            f.severity]
        assert result["message"]["text"] == f.message
        rule = rules[result["ruleIndex"]]
        assert rule["help"]["text"] == CODES[f.code].remediation
        [location] = result["locations"]
        artifact = location["physicalLocation"]["artifactLocation"]
        assert artifact["uriBaseId"] == "PACKAGE_ROOT"
        assert artifact["uri"] == (f.path or "model-package.json")
        if f.layer_index is not None:
            assert result["properties"]["layer_index"] == f.layer_index
    assert run["originalUriBaseIds"]["PACKAGE_ROOT"]["uri"].startswith("file:///")
    assert run["properties"]["status"] == "failed"


def test_passed_report_validates_with_no_results(passed_report: CertReport) -> None:
    doc = build_sarif(passed_report)
    validate(doc)
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is True


def test_certify_writes_sarif_with_the_layer(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build()
    case = next(c for c in CORPUS if c.code == "gguf_tensor_data_not_dense")
    write_raw(info, layer_rel(2), case.apply(load(info.root / layer_rel(2))))
    out = tmp_path / "cert.sarif"
    result = runner.invoke(app, ["models", "certify", str(info.root), "--package-only",
                                 "--sarif", str(out), "-q"])
    assert result.exit_code == 1, result.output
    doc = json.loads(out.read_text())
    validate(doc)
    [hit] = [r for r in doc["runs"][0]["results"] if r["ruleId"] == case.code]
    assert hit["properties"]["layer_index"] == 2
    uri = hit["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == layer_rel(2)


def test_inspect_writes_sarif_for_a_hostile_file(tmp_path: Path) -> None:
    case = next(c for c in CORPUS if c.code == "gguf_empty_key")
    path = write_case(case, tmp_path)
    out = tmp_path / "inspect.sarif"
    result = runner.invoke(app, ["models", "inspect", str(path), "--sarif", str(out), "-q"])
    assert result.exit_code == 1
    doc = json.loads(out.read_text())
    validate(doc)
    results = doc["runs"][0]["results"]
    assert case.code in {r["ruleId"] for r in results}
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results}
    assert uris == {path.as_uri()}
