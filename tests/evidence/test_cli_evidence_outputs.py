"""`--sarif`, `--html/--md/--junit` and `--quiet` on `evidence report`, `run` and `history`
(issue 29.4): schema-valid SARIF, nothing on stdout when quiet, exit statuses unchanged."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence.examplegen import example_files
from tests.evidence.parsers.helpers import DATA as MESH_DATA
from tests.reports.certification.test_sarif import validate

runner = CliRunner()
EXAMPLE = [str(p) for p in example_files()]
# one test-backend-ops perf row per run (a fixed time; tests/evidence/test_run.py varies it)
PERF_ROW = (
    "print('Testing 1 devices'); print(); print('Backend 1/1: CPU')\n"
    "print('  ADD(type=f32,ne=[4096,1,1,1],nr=[1,1,1,1]):   1000 runs -  100.000 us/run - "
    "48 kB/run - 0.37 GB/s')\n"
    "print('  Backend CPU: OK'); print('1/1 backends passed'); print('OK')\n"
)


def _sarif(path: Path) -> dict[str, Any]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    validate(doc)
    return doc


def test_report_sarif_quiet_prints_nothing_and_the_gate_still_exits_2(tmp_path: Path) -> None:
    advisory = runner.invoke(app, ["evidence", "report", *EXAMPLE, "--out-dir",
                                   str(tmp_path / "a"), "--sarif", str(tmp_path / "a.sarif"),
                                   "-q"])
    assert advisory.exit_code == 0, advisory.output
    assert advisory.stdout == ""
    doc = _sarif(tmp_path / "a.sarif")
    ids = [r["id"] for r in doc["runs"][0]["tool"]["driver"]["rules"]]
    assert ids == ["decision.moe_merged_shared_gate_up", "gate.merged_shexp_review",
                   "gate.required_rows"]
    enforced = runner.invoke(app, ["evidence", "report", *EXAMPLE, "--out-dir",
                                   str(tmp_path / "e"), "--sarif", str(tmp_path / "e.sarif"),
                                   "--quiet", "--require-gates"])
    assert enforced.exit_code == 2
    assert enforced.stdout == ""
    assert enforced.stderr.startswith("error: missing Phase E MoE gate rows: ")
    [run] = _sarif(tmp_path / "e.sarif")["runs"]
    assert run["properties"]["enforced"] is True


def test_report_sarif_adds_one_wrote_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "report", *EXAMPLE, "--out-dir", str(tmp_path),
                                 "--sarif", str(tmp_path / "e.sarif")])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[-3:] == [f"wrote {tmp_path / 'decisions.json'}",
                                               f"wrote {tmp_path / 'summary.md'}",
                                               f"wrote {tmp_path / 'e.sarif'}"]


def test_run_writes_every_format_and_quiet_prints_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    files = {k: tmp_path / f"r.{k}" for k in ("html", "md", "junit", "sarif")}
    result = runner.invoke(app, ["evidence", "run", "--out-dir", str(out), "-n", "1", "-q",
                                 *(a for k, p in files.items() for a in (f"--{k}", str(p))),
                                 "--", sys.executable, "-c", PERF_ROW])
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and result.stderr == ""
    assert all(p.is_file() for p in files.values())
    assert files["junit"].read_text(encoding="utf-8").startswith("<?xml")
    assert files["html"].read_text(encoding="utf-8").lstrip().lower().startswith("<!doctype html")
    doc = _sarif(files["sarif"])
    assert doc["runs"][0]["tool"]["driver"]["name"] == "meshcert"


def test_run_lists_the_extra_files_after_the_run_files(tmp_path: Path) -> None:
    result = runner.invoke(app, ["evidence", "run", "--out-dir", str(tmp_path), "-n", "1",
                                 "--junit", str(tmp_path / "r.xml"), "--", sys.executable,
                                 "-c", PERF_ROW])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == f"wrote {tmp_path / 'r.xml'}"
    assert f"wrote {tmp_path / 'decisions.json'}" in lines


def test_history_quiet_writes_the_files_and_keeps_the_gate_exit(tmp_path: Path) -> None:
    source = str(MESH_DATA / "history.jsonl")
    result = runner.invoke(app, ["evidence", "history", source, "--out-dir", str(tmp_path),
                                 "--quiet", "--gate"])
    assert result.exit_code == 1
    assert result.stdout == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["history.html", "history.json",
                                                          "history.md"]
    assert "error: performance-regression: " in result.stderr
    as_json = runner.invoke(app, ["evidence", "history", source, "--json", "--quiet"])
    assert as_json.exit_code == 0
    assert json.loads(as_json.stdout)["rows"] > 0


def test_a_report_file_that_cannot_be_written_exits_3_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = runner.invoke(app, ["evidence", "report", *EXAMPLE, "--out-dir", str(tmp_path),
                                 "--sarif", str(blocker / "evidence.sarif")])
    assert result.exit_code == 3
    assert f"error: cannot write {blocker}" in result.stderr
    assert "Traceback" not in result.output
