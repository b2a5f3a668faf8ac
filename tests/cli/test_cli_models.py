"""`meshcert models certify` as users run it: flags, exit statuses, report files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.conftest import PackageFactory

runner = CliRunner()


def certify(*args: str):
    return runner.invoke(app, ["models", "certify", *args])


def test_good_package_exits_0_and_writes_the_report(packages: PackageFactory,
                                                     tmp_path: Path) -> None:
    info = packages.build("glm")
    out = tmp_path / "deep" / "dir" / "cert.json"
    result = certify(str(info.root), "--package-only", "--report-out", str(out))
    assert result.exit_code == 0, result.output
    text = out.read_text()
    assert text.endswith("}\n")
    report = json.loads(text)
    assert report["status"] == "passed" and report["model_id"] == info.manifest["model_id"]
    assert result.stdout.startswith("Skippy package certification: passed\n")


def test_broken_package_exits_1_and_still_writes_every_finding(packages: PackageFactory,
                                                               tmp_path: Path) -> None:
    info = packages.build("llama")

    def break_it(m: dict[str, Any]) -> None:
        m["layers"].pop(1)
        m.update(format="nope")

    packages.edit_manifest(info, break_it)
    out = tmp_path / "cert.json"
    result = certify(str(info.root), "--package-only", "--report-out", str(out))
    assert result.exit_code == 1
    report = json.loads(out.read_text())
    assert report["status"] == "failed"
    found = {f["code"] for f in report["findings"]}
    assert {"missing_layer", "invalid_format"} <= found
    for f in report["findings"]:
        assert set(f) >= {"code", "severity", "message", "path", "remediation"}


def test_json_flag_prints_only_the_report(packages: PackageFactory) -> None:
    info = packages.build("llama")
    result = certify(str(info.root), "--package-only", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["status"] == "passed"


@pytest.mark.parametrize("args", [
    [],  # neither --package-only nor --api-base
    ["--package-only", "--api-base", "http://127.0.0.1:9"],
    ["--api-base", "ftp://host"],
    ["--api-base", "http://"],
    ["--api-base", "http://127.0.0.1:9/v1"],
    ["--package-only", "--prompt", "   "],
    ["--package-only", "--max-tokens", "0"],
    ["--package-only", "--runtime-abi", "one"],
    ["--package-only", "--stages", "0"],
])
def test_usage_errors_exit_2(packages: PackageFactory, args: list[str]) -> None:
    result = certify("/nonexistent", *args)
    assert result.exit_code == 2, result.output


def test_more_stages_than_layers_fails_without_a_smaller_plan(packages: PackageFactory,
                                                              tmp_path: Path) -> None:
    info = packages.build("llama", layers=4)
    out = tmp_path / "cert.json"
    result = certify(str(info.root), "--package-only", "--stages", "9", "--report-out",
                     str(out))
    assert result.exit_code == 1
    report = json.loads(out.read_text())
    assert "stage_count_exceeds_layer_count" in {f["code"] for f in report["findings"]}
    assert report["stage_plan"] == []
    assert "stage_count_exceeds_layer_count" in result.output


def test_direct_gguf_is_rejected_with_a_report(tmp_path: Path) -> None:
    out = tmp_path / "cert.json"
    result = certify(str(tmp_path / "model.gguf"), "--package-only", "--report-out", str(out))
    assert result.exit_code == 1
    report = json.loads(out.read_text())
    assert [f["code"] for f in report["findings"]] == ["direct_gguf_input"]


def test_a_mistyped_path_is_a_usage_error_before_any_work(tmp_path: Path) -> None:
    # issue 34: this was "certification: failed" (exit 1), as if a package had been judged
    out = tmp_path / "cert.json"
    result = certify(str(tmp_path / "nope"), "--package-only", "--report-out", str(out))
    assert result.exit_code == 2
    assert "does not exist: give a package directory" in result.stderr
    assert not out.exists() and "certification" not in result.output


def test_a_file_is_not_a_package_directory(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a package")
    result = certify(str(tmp_path / "notes.txt"), "--package-only", "--json")
    assert result.exit_code == 2 and result.stdout == ""
    assert "is a file, not a package directory" in result.stderr


def test_a_repo_id_without_hf_scheme_is_pointed_at_hf(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = certify("meshllm/tiny@main", "--package-only")
    assert result.exit_code == 2 and "give hf://meshllm/tiny@main" in result.stderr


def test_a_directory_without_a_manifest_is_still_certified_as_failed(tmp_path: Path) -> None:
    result = certify(str(tmp_path), "--package-only", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["findings"][0]["code"] == "missing_manifest"


def test_runs_as_a_real_subprocess(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    out = tmp_path / "cert.json"
    proc = subprocess.run(
        [sys.executable, "-m", "meshcert", "models", "certify", str(info.root), "--package-only",
         "--report-out", str(out), "--quiet"],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    assert json.loads(out.read_text())["status"] == "passed"
