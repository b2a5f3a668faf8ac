"""`meshcert models certify --min-mesh-llm VERSION` and the `mesh-llm:` console line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meshcert.cli import app
from tests.certify.publisher_packages import build_published

runner = CliRunner()


def certify(*args: str):
    return runner.invoke(app, ["models", "certify", *args])


def test_the_version_line_follows_mesh_llms_lines(tmp_path: Path) -> None:
    pkg = build_published(tmp_path / "p")
    out = tmp_path / "cert.json"
    result = certify(str(pkg.root), "--package-only", "--report-out", str(out))
    lines = result.stdout.splitlines()
    assert lines[0].startswith("Skippy package certification: ")
    assert [line.split(":")[0] for line in lines[1:6]] == ["Model", "Package", "Manifest",
                                                           "Layers", "Report"]
    assert lines[6] == "mesh-llm: >= 0.77.0; split serving certified"
    report = json.loads(out.read_text())
    assert report["mesh_llm"]["minimum_version"] == "0.77.0"
    assert "mesh_llm_minimum_version" in {f["code"] for f in report["findings"]}


def test_min_mesh_llm_below_the_need_fails(tmp_path: Path) -> None:
    pkg = build_published(tmp_path / "p")
    out = tmp_path / "cert.json"
    result = certify(str(pkg.root), "--package-only", "--min-mesh-llm", "0.76.2",
                     "--report-out", str(out))
    assert result.exit_code == 1, result.output
    report = json.loads(out.read_text())
    codes = {f["code"]: f["severity"] for f in report["findings"]}
    assert codes["mesh_llm_version_too_old"] == "error"
    assert "mesh_llm_minimum_version" not in codes
    assert report["mesh_llm"]["required_by_option"] == "0.76.2"


def test_min_mesh_llm_must_be_a_version(tmp_path: Path) -> None:
    result = certify(str(tmp_path), "--package-only", "--min-mesh-llm", "latest")
    assert result.exit_code == 2
    assert "--min-mesh-llm" in result.output


def test_min_mesh_llm_is_not_passed_to_hf_jobs() -> None:
    result = certify("hf://ns/pkg@" + "a" * 40, "--package-only", "--hf-job", "--stages", "2",
                     "--min-mesh-llm", "0.77.0")
    assert result.exit_code == 2
    assert "--min-mesh-llm cannot be combined with --hf-job" in result.output
