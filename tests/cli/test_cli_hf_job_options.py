"""The --hf-job options are usage errors anywhere else, and `report emit` prints a report as
log lines the launcher can read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.hubjobs.report_channel import decode


@pytest.mark.parametrize("flag", [["--confirm"], ["--follow"], ["--max-cost-usd", "1"],
                                  ["--flavor", "cpu-xl"], ["--install", "meshcert"]])
def test_a_jobs_option_without_hf_job_is_a_usage_error(flag: list[str], tmp_path: Path) -> None:
    done = CliRunner().invoke(app, ["models", "certify", str(tmp_path), "--package-only", *flag])
    assert done.exit_code == 2 and "only applies with --hf-job" in done.output


def test_hf_job_needs_a_published_package_and_stages(tmp_path: Path) -> None:
    local = CliRunner().invoke(app, ["models", "certify", str(tmp_path), "--package-only",
                                     "--hf-job", "--stages", "2"])
    assert local.exit_code == 2 and "hf://ns/repo@<sha>" in local.output
    no_stages = CliRunner().invoke(app, ["models", "certify", "hf://ns/pkg@" + "a" * 40,
                                         "--package-only", "--hf-job"])
    assert no_stages.exit_code == 2 and "needs --stages N" in no_stages.output


def test_hf_job_cannot_be_combined_with_a_local_only_option() -> None:
    done = CliRunner().invoke(app, ["models", "certify", "hf://ns/pkg@" + "a" * 40,
                                    "--package-only", "--hf-job", "--stages", "2",
                                    "--materialize"])
    assert done.exit_code == 2 and "--materialize cannot be combined with --hf-job" in done.output


def test_report_emit_prints_lines_that_decode_back(tmp_path: Path) -> None:
    report = tmp_path / "cert.json"
    report.write_text(json.dumps({"status": "passed"}) + "\n")
    done = CliRunner().invoke(app, ["report", "emit", str(report), "--tag", "slice-0-of-2"])
    assert done.exit_code == 0
    assert decode(done.stdout.splitlines(), "slice-0-of-2") == report.read_bytes()
    missing = CliRunner().invoke(app, ["report", "emit", str(tmp_path / "none.json"),
                                       "--tag", "t"])
    assert missing.exit_code == 2
