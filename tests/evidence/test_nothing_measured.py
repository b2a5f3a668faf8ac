"""Nothing measured or read is a failure, never a warning and exit 0 (issue 35, item 4).

Runs are real processes (`python -c` fixtures printing what test-backend-ops prints when its
filter matches no case: the backend header and "1/1 backends passed", no row)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.evidence.parsers.helpers import DATA
from tests.evidence.test_run import PERF_ROW

runner = CliRunner()
PY = sys.executable

# test-backend-ops perf with a -p filter that matches no case (as 2026 builds print it)
NO_CASE = ("print('Testing 1 devices'); print(); print('Backend 1/1: CPU')\n"
           "print('  Device description: x86'); print('  Backend CPU: OK')\n"
           "print('1/1 backends passed'); print('\\x1b[1;32mOK\\x1b[0m')\n")


def _evidence(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = runner.invoke(app, ["evidence", *args], env=env or {})
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return result.exit_code, result.stdout, result.stderr


def test_a_run_where_no_timed_run_measured_a_row_fails(tmp_path: Path) -> None:
    code, out, err = _evidence("run", "--out-dir", str(tmp_path), "-n", "2",
                               "--args", "small:-p x", "--", PY, "-c", NO_CASE)
    assert code == 1
    assert "error: run 1 (small, repeat 1, ok) (" in err and "measured no row" in err
    assert "error: run 2 (small, repeat 2, ok)" in err
    assert "    1/1 backends passed" in err  # what the tool printed
    assert "error: nothing measured: no timed run produced a row" in err
    assert "filter that matches no case" in err
    assert (tmp_path / "runs.json").is_file()  # the record is still written
    assert out.splitlines()[0].startswith("runs: 2 ok")


def test_some_unmeasured_runs_are_warnings_when_others_measured(tmp_path: Path) -> None:
    code, _, err = _evidence("run", "--out-dir", str(tmp_path), "-n", "1",
                             "--command", f"empty:{PY} -c \"print('1/1 backends passed')\"",
                             "--variant", "full", "--", PY, "-c", PERF_ROW)
    assert code == 0, err
    assert "warning: run 2 (empty, repeat 1, ok)" in err and "measured no row" in err


@pytest.mark.parametrize("option", ["--args", "--command"])
def test_unbalanced_quotes_are_a_usage_error(tmp_path: Path, option: str) -> None:
    code, _, err = _evidence("run", "--out-dir", str(tmp_path), option,
                             "small:-p 'ne=\\[32,10,1,1\\]", "--", PY, "-c", NO_CASE)
    assert code == 2 and "No closing quotation" in err and "Traceback" not in err
    assert not (tmp_path / "runs.json").exists()  # refused before any run


def _truncated_evidence(tmp_path: Path) -> Path:
    full = tmp_path / "evidence.json"
    code, _, err = _evidence("ingest", str(DATA / "history.jsonl"), "--out", str(full),
                             "--quiet")
    assert code == 0, err
    cut = tmp_path / "cut.json"
    cut.write_text(full.read_text()[:3000])
    return cut


@pytest.mark.parametrize("command", ["gate", "report"])
def test_a_truncated_evidence_json_is_refused_with_its_line(tmp_path: Path,
                                                           command: str) -> None:
    cut = _truncated_evidence(tmp_path)
    line = cut.read_text().count("\n") + 1   # where the JSON decoder ran out
    extra = ["--out-dir", str(tmp_path / "out")] if command == "report" else []
    code, out, err = _evidence(command, str(cut), str(DATA / "comparison-adaptive.json"),
                               *extra)
    assert code == 2 and out == ""
    assert f"error: {cut}:{line}: bad evidence JSON: " in err
    assert "nothing was evaluated" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("command", ["gate", "report"])
def test_unrecognised_and_binary_inputs_are_refused(tmp_path: Path, command: str) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("release notes, not a benchmark\n")
    blob = tmp_path / "model.bin"
    blob.write_bytes(b"GGUF\x00\x00\x03")
    extra = ["--out-dir", str(tmp_path / "out")] if command == "report" else []
    code, _, err = _evidence(command, str(notes), str(blob), *extra,
                             env={"GLM52_PHASE_E_REQUIRE_GATES": "0"})
    assert code == 2
    assert f"error: {notes}:1: unrecognised format" in err
    assert f"error: {blob}:1: binary file, not a log" in err


def test_a_refused_file_that_was_recognised_stays_a_warning(tmp_path: Path) -> None:
    # schema-smoke output is recognised and refused for what it says: a problem of the report
    code, _, err = _evidence("report", str(DATA / "focused-schema-smoke.json"),
                             str(DATA / "comparison-adaptive.json"), "--out-dir",
                             str(tmp_path))
    assert code == 0
    assert "warning: " in err and "schema-smoke" in err
