"""The `models certify` console: mesh-llm's lines first, finding blocks that read at 80 columns,
colour only on a terminal, `--quiet` only errors, `--json` only JSON.

The snapshots live in tests/cli/snapshots/; after an intended change, regenerate them with
`MESHCERT_UPDATE_SNAPSHOTS=1 python -m pytest tests/cli/test_cert_console.py`.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from typer.testing import CliRunner

from meshcert.certify.report import CertReport, CheckRun, Gate, RuntimeGate, ToolInfo
from meshcert.cli import app
from meshcert.cli.cert_console import (
    Line,
    plain_text,
    print_certification,
    print_lines,
    render_lines,
    skipped_lines,
    written_as_is,
)
from meshcert.core.findings import finding
from tests.conftest import PackageFactory

SNAPSHOTS = Path(__file__).parent / "snapshots"
MESH_LLM_LABELS = ["Skippy package certification: ", "Model: ", "Package: ", "Manifest: ",
                   "Layers: ", "Report: "]
runner = CliRunner()


def sample_report() -> CertReport:
    """A failed report with findings of every severity, long messages and long paths."""
    findings = [
        finding("missing_layer", "The manifest lists layer 3, but no layer artifact for it "
                "exists in the package directory; certification cannot materialize stage 1.",
                path="layers/layer-0003.gguf", layer_index=3),
        finding("artifact_sha256_mismatch", "layers/layer-0001.gguf hashes to 9f2c... but the "
                "manifest declares 4ab1...; the file was changed or truncated after packaging.",
                path="layers/very/long/folder/name/that/does/not/fit/next/to/the/code/"
                     "layer-0001.gguf", layer_index=1),
        finding("missing_created_at", "model-package.json has no created_at_unix_secs.",
                path="model-package.json"),
        finding("undeclared_artifact", "extra.bin is in the package folder but not in the "
                "manifest.", path="extra.bin"),
        finding("unknown_manifest_field", "model-package.json has a field the schema does not "
                "know: 'shards_hint'.", path="model-package.json"),
    ]
    return CertReport(
        status="failed", input="./pkg", resolved_package_ref="/data/packages/glm-4.7-q4",
        model_id="org/GLM-4.7-Q4_K_M", manifest_sha256="ab" * 32, layer_count=94,
        package_gate=Gate(name="package_materialization", status="failed",
                          details="2 error finding(s)"),
        runtime_gates=[
            RuntimeGate(name="v1_models", status="passed", details="model listed"),
            RuntimeGate(name="v1_chat_completions", status="failed",
                        details="HTTP 500 from /v1/chat/completions after 3.2 s: the server "
                                "answered with an error object instead of a choice"),
            RuntimeGate(name="v1_responses", status="not_required"),
        ],
        findings=findings, checks=sample_checks(), tool=ToolInfo(version="0.1.0"),
        started_at="2026-01-01T00:00:00.000Z", finished_at="2026-01-01T00:00:01.000Z")


def sample_checks() -> list[CheckRun]:
    """Checks that ran, one not asked for and one not applicable (issue 34)."""
    return [
        CheckRun(name="layers", status="failed", findings=1, duration_ms=0.2,
                 codes=["missing_layer"]),
        CheckRun(name="artifact_files", status="failed", findings=1, duration_ms=812.0,
                 codes=["artifact_sha256_mismatch"]),
        CheckRun(name="manifest_fields", status="warning", findings=2, duration_ms=0.1,
                 codes=["missing_created_at", "unknown_manifest_field"]),
        CheckRun(name="undeclared_artifacts", status="warning", findings=1, duration_ms=0.1,
                 codes=["undeclared_artifact"]),
        CheckRun(name="hub_metadata", status="skipped", findings=0, duration_ms=0.0,
                 details="not applicable: a local directory has no Hub metadata (runs on "
                 "hf:// packages)"),
        CheckRun(name="source_parity", status="skipped", findings=0, duration_ms=0.0,
                 details="not asked for: runs with --source SOURCE.gguf"),
    ]


def has_colour(text: str) -> bool:
    """Any SGR escape that sets a foreground or background colour."""
    params = (p for seq in re.findall(r"\x1b\[([0-9;]*)m", text) for p in seq.split(";"))
    return any(p.isdigit() and (30 <= int(p) <= 49 or 90 <= int(p) <= 107) for p in params)


def rendered(width: int) -> str:
    buf = io.StringIO()
    console = Console(file=buf, width=width, force_terminal=False, color_system=None)
    print_certification(sample_report(), "out/cert.json", console=console)
    return buf.getvalue()


@pytest.mark.parametrize("width", [80, 120])
def test_snapshot(width: int) -> None:
    text = rendered(width)
    path = SNAPSHOTS / f"certify_console_{width}.txt"
    if os.environ.get("MESHCERT_UPDATE_SNAPSHOTS"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("width", [80, 120])
def test_every_line_fits_the_width(width: int) -> None:
    lines = rendered(width).splitlines()
    # mesh-llm's lines are printed exactly, never wrapped, and so is the verdict (the last
    # line, grepped whole); everything between fits, but for a token longer than the width
    # (a path, an id), which is never broken in the middle: it stands alone on its line
    for line in lines[len(MESH_LLM_LABELS):-1]:
        assert len(line) <= width or len(line.split()) == 1, line
    assert any(line.strip() == "layers/very/long/folder/name/that/does/not/fit/next/to/the/"
               "code/layer-0001.gguf" for line in lines) == (width < 90)


def test_mesh_llm_lines_come_first_in_its_order_and_spelling() -> None:
    lines = rendered(80).splitlines()
    assert lines[:6] == [
        "Skippy package certification: failed", "Model: org/GLM-4.7-Q4_K_M",
        "Package: /data/packages/glm-4.7-q4", f"Manifest: {'ab' * 32}", "Layers: 94",
        "Report: out/cert.json"]


def test_findings_are_grouped_by_severity_with_counts_last() -> None:
    lines = rendered(80).splitlines()
    order = ["error", "warning", "info"]
    heads = [i for i, line in enumerate(lines) if line.split("  ")[0] in order]
    severities = [lines[i].split("  ")[0] for i in heads]
    assert severities == sorted(severities, key=order.index)
    assert lines[-1] == ("certification failed: 2 errors, 2 warnings, 1 note; 4 checks run, "
                         "2 skipped; package gate failed; runtime gate v1_chat_completions "
                         "failed")


def test_skipped_checks_are_listed_with_the_flag_that_runs_them() -> None:
    lines = rendered(80).splitlines()
    start = lines.index("skipped checks (2)")
    assert lines[start + 1:start + 3] == ["    not asked for: source_parity (--source SOURCE.gguf)",
                                          "    not applicable: hub_metadata"]


def test_checks_that_read_nothing_are_listed_as_such_not_as_not_applicable() -> None:
    # an unreachable Hub ref or an empty directory: manifest_json applies to the package, which
    # could not be read; "not applicable: manifest_json" said otherwise (issue 45)
    from meshcert.certify.engine import NO_HEADER_READ, NOTHING_READ

    unread = [CheckRun(name=name, status="skipped", findings=0, duration_ms=0.0,
                       details=details)
              for name, details in (("manifest_json", NOTHING_READ),
                                    ("layers", "not applicable: no package manifest was read"),
                                    ("tokenizer", NO_HEADER_READ))]
    report = sample_report().model_copy(update={"checks": sample_checks() + unread})
    lines = [line.text for line in skipped_lines(report, 80)]
    assert lines == ["skipped checks (5)",
                     "    not asked for: source_parity (--source SOURCE.gguf)",
                     "    nothing read (no package manifest): manifest_json, layers",
                     "    nothing read (no GGUF header): tokenizer",
                     "    not applicable: hub_metadata"]


def test_a_block_puts_message_and_remediation_below_the_head() -> None:
    report = sample_report()
    lines = [line.text for line in render_lines(report, None, 80)]
    head = lines.index("error  missing_layer  layers/layer-0003.gguf (layer 3)")
    assert lines[head + 1].startswith("    The manifest lists layer 3")
    fix = next(line for line in lines[head:] if line.startswith("    fix: "))
    assert fix.removeprefix("    fix: ").split()[0] == report.findings[0].remediation.split()[0]


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    def out(**kwargs: object) -> str:
        buf = io.StringIO()
        print_certification(sample_report(), None, console=Console(file=buf, width=80,
                                                                   **kwargs))  # type: ignore[arg-type]
        return buf.getvalue()

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert has_colour(out(force_terminal=True))
    assert "\x1b[" not in out(force_terminal=False)  # no escape at all off a terminal
    monkeypatch.setenv("NO_COLOR", "1")
    assert not has_colour(out(force_terminal=True))  # bold may stay: NO_COLOR is about colour


def rich_on_a_pipe(lines: list[Line], width: int = 80) -> str:
    buf = io.StringIO()
    print_lines(lines, Console(file=buf, width=width))
    return buf.getvalue()


@pytest.mark.parametrize("quiet", [False, True], ids=["summary", "quiet"])
@pytest.mark.parametrize("columns", ["80", "120", "47"])
def test_to_a_pipe_the_summary_is_what_rich_writes_without_rich(
        quiet: bool, columns: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Off a terminal the lines are written directly (meshcert.cli.terminal), byte for byte what
    rich would have written to the same pipe at the same width."""
    monkeypatch.setenv("COLUMNS", columns)
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    print_certification(sample_report(), "out/cert.json", quiet=quiet)
    captured = capsys.readouterr()
    direct = captured.err if quiet else captured.out
    buf = io.StringIO()
    print_certification(sample_report(), "out/cert.json", quiet=quiet,
                        console=Console(file=buf))
    assert direct == buf.getvalue() and direct.strip()


KEPT_BY_RICH = st.text(st.characters(blacklist_characters="\t\x07\x08\x0b\x0c\r"))


@settings(max_examples=400, deadline=None)
@given(st.lists(KEPT_BY_RICH, min_size=1, max_size=4))
def test_a_line_rich_would_not_rewrite_is_written_as_its_text(texts: list[str]) -> None:
    lines = [Line(text, "error") for text in texts]
    assert written_as_is(lines)
    assert plain_text(lines) == rich_on_a_pipe(lines)


@pytest.mark.parametrize("text", ["tab\there", "bell\x07", "carriage\rreturn", "\x0cform"])
def test_a_line_rich_would_rewrite_goes_through_rich(
        text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    report = sample_report()
    report.model_id = text  # mesh-llm's `Model:` line prints it as it is, never wrapped
    assert not written_as_is(render_lines(report, None, 80))
    print_certification(report, None)
    buf = io.StringIO()
    print_certification(report, None, console=Console(file=buf))
    assert capsys.readouterr().out == buf.getvalue()


@pytest.mark.parametrize("flags", [[], ["--json"]], ids=["summary", "json"])
@pytest.mark.parametrize("broken", [False, True], ids=["passed", "failed"])
def test_a_reader_that_leaves_early_leaves_the_verdict_as_the_exit_status(
        tmp_path: Path, broken: bool, flags: list[str]) -> None:
    """`meshcert models certify PKG | head -1`: the summary is dropped, not a traceback, and
    the status is still 0 passed / 1 failed (rich would have exited 1 either way)."""
    from meshcert.testing import llama_spec, write_package

    root = write_package(llama_spec(), tmp_path / "pkg", source_dir=None).root
    if broken:
        layer = root / "layers" / "layer-000.gguf"
        data = bytearray(layer.read_bytes())
        data[-1] ^= 0xFF
        layer.write_bytes(bytes(data))
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    env.pop("FORCE_COLOR", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "meshcert", "models", "certify", str(root), "--package-only",
         *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None
    process.stdout.close()  # the reader is gone before the first byte is written
    process.stdout = None
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == (1 if broken else 0), stderr.decode()
    assert b"Traceback" not in stderr and b"BrokenPipe" not in stderr


def test_cli_prints_the_mesh_llm_lines_first(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"].pop(1))
    out = tmp_path / "cert.json"
    result = runner.invoke(app, ["models", "certify", str(info.root), "--package-only",
                                 "--report-out", str(out)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert [line[:len(label)] for line, label in zip(lines, MESH_LLM_LABELS, strict=False)] \
        == MESH_LLM_LABELS
    report = json.loads(out.read_text())
    assert lines[0] == "Skippy package certification: failed"
    assert lines[3] == f"Manifest: {report['manifest_sha256']}"
    assert "error  missing_layer" in result.stdout and "\x1b[" not in result.stdout


def test_quiet_prints_nothing_but_the_errors(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"].pop(1))
    result = runner.invoke(app, ["models", "certify", str(info.root), "--package-only", "-q"])
    assert result.exit_code == 1 and result.stdout == ""
    heads = [line for line in result.stderr.splitlines() if not line.startswith(" ")]
    assert heads and all(line.startswith("error  ") for line in heads)
    assert "missing_layer" in result.stderr


def test_quiet_on_a_good_package_prints_nothing(packages: PackageFactory) -> None:
    info = packages.build("llama")
    result = runner.invoke(app, ["models", "certify", str(info.root), "--package-only", "-q"])
    assert result.exit_code == 0 and result.stdout == "" and result.stderr == ""


def test_json_prints_only_json(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"].pop(1))
    result = runner.invoke(app, ["models", "certify", str(info.root), "--package-only",
                                 "--json"])
    assert result.exit_code == 1 and result.stderr == ""
    assert json.loads(result.stdout)["status"] == "failed"
