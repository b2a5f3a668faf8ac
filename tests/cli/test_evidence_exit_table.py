"""Every cell of docs/evidence.md's exit-status table, run: each evidence command x (passed,
failed, incomplete, nothing read, unreadable), on real inputs (test-backend-ops logs, a
performance history, a fixture command), unpiped and into a pipe whose reader is gone before
the first byte. The table is read from the doc, so the doc and the test cannot disagree."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.evidence.gate_logs import PASSING_US, perf_console, repeated
from tests.evidence.mesh_history import jsonl, series
from tests.evidence.samples import SAMPLES

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "evidence.md"
COLUMNS = ("passed", "failed", "incomplete", "nothing read", "unreadable")
# the environment of every run: no setting of the test process leaks in
CLEAN = {"GLM52_PHASE_E_REQUIRE_GATES": None, "GLM52_PHASE_E_KERNEL_SWEEP": None,
         "NO_COLOR": "1"}


def doc_table() -> dict[str, dict[str, int]]:
    """command (as the doc writes it, without backticks) -> column -> exit status."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- exit-statuses:")
    lines = text[start:].splitlines()[1:]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert tuple(header) == ("command", *COLUMNS)
    table: dict[str, dict[str, int]] = {}
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split("|")]
        table[cells[0].strip("`")] = {col: int(v) for col, v in zip(COLUMNS, cells[1:],
                                                                       strict=True)}
    return table


TABLE = doc_table()
CELLS = [(command, column) for command in TABLE for column in COLUMNS]


def _write(folder: Path, texts: dict[str, str]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return [str(folder / name) for name in texts]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], list[str]]:
    """(kind of command, column) -> the files (or fixture command) that give that verdict."""
    tmp = tmp_path_factory.mktemp("exit-table")
    missing_row = {k: v for k, v in PASSING_US.items() if k != "small_graph_fused"}
    hello = _write(tmp / "hello", {"benchmark.log": "hello world\n"})
    unknown = _write(tmp / "unknown", {"results.jsonl": "not json, not a log\n"})
    logs = {
        "passed": _write(tmp / "passed", repeated(PASSING_US, 3)),
        "failed": [str(SAMPLES / "phase-e-perf.console.log")],
        "incomplete": _write(tmp / "one-run", {"run-1.console.log": perf_console(PASSING_US)}),
        "nothing read": hello, "unreadable": unknown}
    out: dict[tuple[str, str], list[str]] = {("logs", c): v for c, v in logs.items()}
    out.update({("gate", c): v for c, v in logs.items()})
    out["gate", "incomplete"] = _write(tmp / "missing-row", {
        "run-1.console.log": perf_console(missing_row)})
    stable = [(400.0, 180.0), (401.0, 181.0), (399.0, 180.0), (400.5, 180.5)]
    out.update({
        ("history", "passed"): _write(tmp / "h", {"pass.jsonl": jsonl(series("mesh", stable))}),
        ("history", "failed"): _write(tmp / "h", {"regressed.jsonl": jsonl(series(
            "mesh", [*stable[:3], (300.0, 180.0)]))}),
        ("history", "incomplete"): _write(tmp / "h", {"short.jsonl": jsonl(series(
            "mesh", stable[:2]))}),
        ("history", "nothing read"): hello,
        ("history", "unreadable"): [str(tmp / "no-such-history.jsonl")]})
    cat = ["--", "cat"]
    out.update({
        ("run", "passed"): ["-n", "3", *cat, logs["passed"][0]],
        ("run", "failed"): ["-n", "1", *cat, logs["failed"][0]],
        ("run", "incomplete"): ["-n", "1", *cat, logs["incomplete"][0]],
        ("run", "nothing read"): ["-n", "1", *cat, hello[0]],
        ("run", "unreadable"): ["-n", "1", "--", str(tmp / "no-such-fixture")]})
    return out


def argv(command: str, column: str, inputs: dict[tuple[str, str], list[str]],
         out_dir: Path) -> list[str]:
    words = shlex.split(command)
    assert words[0] == "evidence"
    name = words[1]
    kind = {"gate": "gate", "history": "history", "run": "run"}.get(name, "logs")
    given = inputs[kind, column]
    if name == "run":
        return [*words, "--out-dir", str(out_dir), *given]
    if name == "report":
        return [*words, *given, "--out-dir", str(out_dir)]
    return [*words, *given]


def test_the_doc_table_covers_every_evidence_command() -> None:
    named = {shlex.split(c)[1] for c in TABLE}
    assert named == {"ingest", "run", "gate", "report", "history"}
    assert TABLE["evidence gate --require-gates"]["failed"] == 2   # the Phase E contract


@pytest.mark.parametrize(("command", "column"), CELLS)
def test_every_cell_holds_unpiped(command: str, column: str, tmp_path: Path,
                                  inputs: dict[tuple[str, str], list[str]]) -> None:
    result = CliRunner().invoke(app, argv(command, column, inputs, tmp_path), env=CLEAN)
    assert result.exit_code == TABLE[command][column], (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(("command", "column"), CELLS)
def test_every_cell_holds_into_a_closed_pipe(command: str, column: str, tmp_path: Path,
                                             inputs: dict[tuple[str, str], list[str]]) -> None:
    """The reader is gone before the first byte: every write of the command meets a closed
    pipe, and the status is still the table's."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    for key in ("GLM52_PHASE_E_REQUIRE_GATES", "GLM52_PHASE_E_KERNEL_SWEEP", "FORCE_COLOR"):
        env.pop(key, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "meshcert", *argv(command, column, inputs, tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=tmp_path)
    assert process.stdout is not None
    process.stdout.close()
    process.stdout = None
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == TABLE[command][column], stderr.decode()
    assert not re.search(rb"Traceback|BrokenPipe|Exception ignored", stderr)
