"""`meshcert demo`: the first command a new user runs."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.demo import run_demo_parity


def test_demo_certifies_the_bundled_package_and_says_where_reports_are(tmp_path: Path) -> None:
    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "cert.json").read_text())
    assert report["status"] == "passed"
    assert report["layer_count"] >= 2
    lines = result.output.splitlines()
    # piped, nothing is wrapped mid-token: each path and id whole on its line (issue 45)
    assert f"certification report (JSON): {out / 'cert.json'}" in lines
    # the one verdict sentence, as `models certify` ends, for both packages; and the evidence's
    verdicts = [x for x in lines if re.match(r"certification (passed|failed|incomplete)", x)]
    # without llama-cpp-python its parser did not see the files: the verdict says so
    passed = ("certification passed: 0 errors, " if importlib.util.find_spec("llama_cpp")
              else "certification passed (llama.cpp not available): 0 errors, ")
    assert len(verdicts) == 2 and all(v.startswith(passed)
                                      and "; package gate passed" in v for v in verdicts)
    assert "check groups" not in result.output
    assert any(x.startswith(("evidence passed: ", "evidence failed: ",
                             "evidence incomplete: ")) for x in lines)
    assert any(x.startswith("package v2:    ") and x.endswith(")") for x in lines)
    if importlib.util.find_spec("llama_cpp") is not None:  # the tiny llama passes parity
        assert "split parity:  passed on a tiny llama package" in result.output
        assert "token ids and logits identical" in result.output.replace("\n", "")
    else:
        assert "split parity:  not run: llama-cpp-python is not installed" in result.output
        assert "meshcert[live]" in result.output.replace("\n", "")  # not eaten as markup
    # running it twice is fine (fresh package each time)
    again = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert again.exit_code == 0, again.output


def test_demo_says_when_parity_cannot_run(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from meshcert.certify.workers import llama_library

    monkeypatch.setattr(llama_library, "package_dirs", lambda: [])  # as if not installed
    gate, note = run_demo_parity(tmp_path)
    assert gate is None and note is not None and "llama-cpp-python is not installed" in note
    assert not (tmp_path / "parity-package").exists()
