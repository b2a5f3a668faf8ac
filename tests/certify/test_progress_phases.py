"""Long work shows progress (issue 34): `models certify --materialize --parity` printed nothing
for 35-47 s on a 98 MB model. Each phase (assemble, load the source, load the package, each
prompt done) is now one line on stderr, in a terminal or a CI log alike, and none with
--quiet or --json. Run on the real SmolLM2 split, under real llama.cpp."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.certify.test_load_as_node import smollm2, split_packages

pytestmark = pytest.mark.slow
__all__ = ["smollm2", "split_packages"]  # the session fixtures, shared
# prompts no other test uses, so the source's runs are not reused from an earlier test
PROMPTS = ["Progress phases: one, two,", "Progress phases: the sky is"]
TOKENS = 3


def certify(root: Path, source: Path, tmp_path: Path, *more: str):
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(PROMPTS) + "\n")
    return CliRunner().invoke(app, [
        "models", "certify", str(root), "--package-only", "--materialize",
        "--materialize-dir", str(tmp_path / "stages"), "--parity", str(source),
        "--parity-prompts", str(prompts), "--parity-tokens", str(TOKENS),
        "--report-out", str(tmp_path / "cert.json"), *more])


# off a terminal, a byte-progress task is a few plain lines too (meshcert.core.progress's
# PeriodicLines): `<task>: started, ...`, `<task>: 12.5 MB ...`, `<task>: done, ...`
PERIODIC = re.compile(r": (started|done, |\d)")


def phases(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines()
            if line.startswith(("materialize ", "parity: ")) and not PERIODIC.search(line)]


def periodic(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if PERIODIC.search(line)]


def test_every_phase_is_a_line_on_stderr_in_order(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path) -> None:
    result = certify(split_packages["v2"], smollm2, tmp_path)
    assert result.exit_code == 0, result.output
    lines = phases(result.stderr)
    starts = [line.split(":")[0] if line.startswith("materialize") else line[:60]
              for line in lines]
    stage0 = next(s for s in starts if "cert-stage-0" in s)
    stage1 = next(s for s in starts if "cert-stage-1" in s)
    assert lines[0].startswith(f"{stage0}: assembling ")
    assert lines[1].startswith(f"{stage0}: built, ")
    assert lines[2].startswith(f"{stage1}: assembling ")
    assert lines[3].startswith(f"{stage1}: built, ")
    assert lines[4].startswith("parity: reassembling the model from the package (")
    assert lines[5:] == [
        f"parity: loading the source model in llama.cpp, then 2 prompt(s) x {TOKENS} "
        "greedy tokens",
        "parity: source model, prompt 1/2 done",
        "parity: source model, prompt 2/2 done",
        f"parity: loading the package model in llama.cpp, then 2 prompt(s) x {TOKENS} "
        "greedy tokens",
        "parity: package model, prompt 1/2 done",
        "parity: package model, prompt 2/2 done",
    ]
    assert "\x1b[" not in result.stderr  # plain lines in a log: no cursor escapes
    # each stage's bytes are said under the stage's own name, from start to done
    for stage in (stage0, stage1):
        said = [line for line in periodic(result.stderr) if line.startswith(f"{stage}: ")]
        assert said[0].startswith(f"{stage}: started, ") and said[-1].startswith(f"{stage}: done, ")


def test_a_second_run_says_what_it_reused(split_packages: dict[str, Path], smollm2: Path,
                                          tmp_path: Path) -> None:
    certify(split_packages["v2"], smollm2, tmp_path)
    again = certify(split_packages["v2"], smollm2, tmp_path)
    assert again.exit_code == 0, again.output
    lines = phases(again.stderr)
    assert [line.split(": ", 1)[1] for line in lines[:4]] == [
        "re-opening the cached build with llama.cpp", "reused from the cache"] * 2
    assert "parity: source model runs reused (computed earlier in this process)" in lines


@pytest.mark.parametrize("flag", ["--quiet", "--json"])
def test_quiet_and_json_print_no_phase(split_packages: dict[str, Path], smollm2: Path,
                                       tmp_path: Path, flag: str) -> None:
    result = certify(split_packages["v2"], smollm2, tmp_path, flag)
    assert result.exit_code == 0, result.output
    assert phases(result.stderr) == [] and phases(result.stdout) == []
