"""One range notation: `package plan` prints each stage as the flag that certifies it
(`--layers A..B`, half-open as the flag reads it, or `--stage I/N`), and pasting either flag
into `models certify --package-only` certifies exactly the artifacts that stage fetches."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.certify.scope import parse_layers
from meshcert.certify.stages import layer_range, plan_stages
from meshcert.cli import app
from tests.writer.builders import MODEL_ID, tiny_source

runner = CliRunner()
STAGE_LINE = re.compile(r"^\s+(stage-\d+)\s+(--layers \S+)\s+(--stage \S+)\s+(\d+) artifacts")


def test_a_layer_range_is_written_as_the_flag_reads_it() -> None:
    assert layer_range(0, 5) == "0..5"  # five layers: 0 to 4
    for start, end in [(0, 1), (3, 8), (0, 94)]:
        parsed = parse_layers(layer_range(start, end))
        assert (parsed.layer_start, parsed.layer_end) == (start, end)
    assert [s.layers for s in plan_stages(5, 2)] == ["0..3", "3..5"]


@pytest.mark.parametrize("fmt", ["v2", "v1"])
def test_each_stage_line_pasted_certifies_exactly_that_stage(tmp_path: Path, fmt: str) -> None:
    source, pkg = tiny_source(tmp_path), tmp_path / "pkg"
    written = runner.invoke(app, ["package", "write", str(source), "--out-dir", str(pkg),
                                  "--model-id", MODEL_ID, "--format", fmt, "-q"])
    assert written.exit_code == 0, written.output
    table = runner.invoke(app, ["package", "plan", str(source), "--stages", "3",
                                "--format", fmt])
    planned = json.loads(runner.invoke(app, ["package", "plan", str(source), "--stages", "3",
                                             "--format", fmt, "--json"]).stdout)
    lines = [m for m in map(STAGE_LINE.match, table.stdout.splitlines()) if m]
    assert [m[1] for m in lines] == [s["stage_id"] for s in planned["stages"]]
    for match, stage in zip(lines, planned["stages"], strict=True):
        assert int(match[4]) == len(stage["artifacts"])
        for flag in (match[2], match[3]):  # either flag, pasted as printed
            report = tmp_path / "slice.json"
            done = runner.invoke(app, ["models", "certify", str(pkg), "--package-only",
                                       *shlex.split(flag), "--report-out", str(report), "-q"])
            assert done.exit_code == 0, (flag, done.output)
            scope = json.loads(report.read_text())["scope"]
            assert (scope["layer_start"], scope["layer_end"]) == (stage["layer_start"],
                                                                  stage["layer_end"]), flag
            assert sorted(scope["artifacts"]) == sorted(stage["artifacts"]), flag
