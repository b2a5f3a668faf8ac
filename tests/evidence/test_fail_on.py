"""`fail_on` in the decision rules file turns the report's verdict into the exit status, as
`--fail-on` does (which overrides it); a value other than failed|incomplete is refused (exit 2)
by name, before anything is evaluated."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.evidence.gate_logs import PASSING_US, perf_console

runner = CliRunner()
CLEAN = {"GLM52_PHASE_E_REQUIRE_GATES": None}
RULES = """
schema_version = 1
{fail_on}

[[decisions]]
policy = "fused_rms_norm"
title = "fused RMS norm + mul"

[[decisions.baseline]]
op = "RMS_NORM"

[[decisions.candidate]]
op = "RMS_NORM_MUL"
"""


def _report(tmp_path: Path, fail_on: str, *extra: str) -> tuple[int, str]:
    """`evidence report` of one run of every Phase E row (the gate passes, the decisions are
    undecided: INCOMPLETE) with a rules file holding `fail_on`."""
    log = tmp_path / "run-1.console.log"
    log.write_text(perf_console(PASSING_US))
    rules = tmp_path / "rules.toml"
    rules.write_text(RULES.format(fail_on=fail_on))
    result = runner.invoke(app, ["evidence", "report", str(log), "--out-dir",
                                 str(tmp_path / "out"), "--decisions", str(rules), *extra],
                           env=CLEAN)
    return result.exit_code, result.stderr


@pytest.mark.parametrize(("fail_on", "extra", "status"), [
    ("", [], 0),                                                  # the verdict is advisory
    ('fail_on = "incomplete"', [], 3),
    ('fail_on = "failed"', [], 0),                                # INCOMPLETE is not FAILED
    ('fail_on = "incomplete"', ["--fail-on", "failed"], 0),       # the option wins
    ("", ["--fail-on", "incomplete"], 3),
], ids=["none", "file-incomplete", "file-failed", "option-overrides", "option"])
def test_the_verdict_becomes_the_status_when_asked(tmp_path: Path, fail_on: str,
                                                    extra: list[str], status: int) -> None:
    code, stderr = _report(tmp_path, fail_on, *extra)
    assert code == status, stderr
    if status:
        assert "error: verdict INCOMPLETE" in stderr


def test_a_bad_fail_on_is_refused_by_name(tmp_path: Path) -> None:
    code, stderr = _report(tmp_path, 'fail_on = "sometimes"')
    assert code == 2
    assert "fail_on" in stderr and "Traceback" not in stderr
    assert not (tmp_path / "out").exists()                 # refused before any work
    code, stderr = _report(tmp_path, "", "--fail-on", "sometimes")
    assert code == 2 and "'sometimes' is not one of failed, incomplete" in stderr
