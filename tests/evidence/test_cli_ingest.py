"""`meshcert evidence ingest`: summary, --out / --json / --quiet / --label, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence import read_evidence_json
from tests.evidence.samples import SAMPLES

runner = CliRunner()
PERF = str(SAMPLES / "phase-e-perf.console.log")
CSV = str(SAMPLES / "tbo-output.csv")
SWEEP = str(SAMPLES / "kernel-sweep" / "q3-k-mul-mv-id-nsg-4.console.log")


def test_ingest_prints_rows_per_file_and_problems_and_writes_json(tmp_path: Path) -> None:
    out = tmp_path / "nested" / "evidence.json"
    result = runner.invoke(app, ["evidence", "ingest", PERF, CSV, SWEEP, "--out", str(out)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "ingested 3 file(s): 24 row(s), 1 problem(s)"
    assert any("phase-e-perf.console.log  [tbo-console]  23 row(s): perf 17, perf_warmup 1, "
               "perf_sample 3, perf_summary 1, perf_metadata 1" in line for line in lines)
    assert any("variant=q3-k-mul-mv-id-nsg-4" in line for line in lines)
    assert f"  {CSV}:1: rejected: test-backend-ops --output csv has no timing column" in \
        result.stdout
    assert lines[-1] == f"wrote {out}"
    saved = read_evidence_json(out)
    assert len(saved.table) == 24 and len(saved.sources) == 3


def test_json_summary() -> None:
    result = runner.invoke(app, ["evidence", "ingest", PERF, CSV, "--json"])
    assert result.exit_code == 0
    summary = json.loads(result.stdout)
    assert summary["rows"] == 23 and summary["out"] is None
    assert summary["rows_by_kind"]["perf"] == 17
    assert summary["sources"][0]["rows_by_kind"]["perf_sample"] == 3
    assert summary["problems"][0]["line"] == 1 and summary["problems"][0]["kind"] == "rejected"


def test_quiet_and_label(tmp_path: Path) -> None:
    out = tmp_path / "e.json"
    result = runner.invoke(app, ["evidence", "ingest", SWEEP, "--label", "nsg-4-rerun",
                                 "--quiet", "--out", str(out)])
    assert result.exit_code == 0 and result.stdout == ""
    assert set(read_evidence_json(out).table["variant"]) == {"nsg-4-rerun"}
    assert json.loads(out.read_text())["label"] == "nsg-4-rerun"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    assert runner.invoke(app, ["evidence", "ingest"]).exit_code == 2
    missing = runner.invoke(app, ["evidence", "ingest", "no-such-run.log"])
    assert missing.exit_code == 2 and "does not exist" in missing.output
    assert runner.invoke(app, ["evidence", "ingest", str(tmp_path)]).exit_code == 2
    assert runner.invoke(app, ["evidence", "ingest", PERF, "--label", " "]).exit_code == 2
    blocked = tmp_path / "file"
    blocked.write_text("x")
    bad_out = runner.invoke(app, ["evidence", "ingest", PERF, "--out",
                                  str(blocked / "e.json")])
    assert bad_out.exit_code == 2 and "cannot write" in bad_out.output


def test_problems_do_not_fail_the_command(tmp_path: Path) -> None:
    log = tmp_path / "run-1.console.log"
    log.write_text("Backend 1/1: Metal\n  MUL_MAT(type_a=f32):   12 runs - x us/run - junk\n"
                   "  ADD(type=f32,ne=[4096,1,1,1]):  171990 runs -  5.83 us/run -  48 kB/run"
                   " -  0.37 GB/s\n")
    result = runner.invoke(app, ["evidence", "ingest", str(log)])
    assert result.exit_code == 0
    assert f"{log}:2: malformed: looks like a perf row" in result.stdout


def test_no_row_in_any_file_fails_and_writes_nothing(tmp_path: Path) -> None:
    # Issue 35: an ingest that read nothing used to write an empty evidence file, exit 0.
    log = tmp_path / "run-1.console.log"
    log.write_text("Backend 1/1: Metal\n  MUL_MAT(type_a=f32):   12 runs - x us/run - junk\n")
    notes = tmp_path / "notes.txt"
    notes.write_text("hello, not a benchmark\n")
    out = tmp_path / "evidence.json"
    result = runner.invoke(app, ["evidence", "ingest", str(log), str(notes), "--out", str(out)])
    assert result.exit_code == 1
    assert f"{log}:2: malformed: looks like a perf row" in result.stdout
    assert f"{notes}: unknown: unrecognised format" in result.stdout
    assert "error: no evidence rows in any of the 2 file(s)" in result.stderr
    assert f"{out} not written" in result.stderr and not out.exists()
    as_json = runner.invoke(app, ["evidence", "ingest", str(notes), "--json"])
    assert as_json.exit_code == 1 and json.loads(as_json.stdout)["rows"] == 0
