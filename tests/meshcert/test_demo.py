"""`meshcert demo`: the first command a new user runs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meshcert.cli import app


def test_demo_certifies_the_bundled_package_and_says_where_reports_are(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "cert.json").read_text())
    assert report["status"] == "passed"
    assert report["layer_count"] >= 2
    assert str(out / "cert.json") in result.output.replace("\n", "")
    # running it twice is fine (fresh package each time)
    again = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert again.exit_code == 0, again.output
