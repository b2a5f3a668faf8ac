"""`meshcert package write` and `package plan` as users run them: exit statuses, what goes to
stdout and stderr, the report file, the plan's JSON schema, Ctrl-C and --resume."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.certify.verdict import verdict
from meshcert.cli import app
from meshcert.writer.plan_report import plan_json_schema
from tests.support.interrupt import interrupt_at, start_interruptible
from tests.writer.builders import MODEL_ID, moe_sources, tiny_source

runner = CliRunner()
REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"


def package(*args: str):
    return runner.invoke(app, ["package", *args])


def test_write_exits_0_prints_a_summary_and_writes_the_report(tmp_path: Path) -> None:
    out, report = tmp_path / "pkg", tmp_path / "cert.json"
    result = package("write", str(tiny_source(tmp_path)), "--out-dir", str(out),
                     "--model-id", MODEL_ID, "--report-out", str(report))
    assert result.exit_code == 0, result.output
    data = json.loads(report.read_text())
    assert data["status"] == "passed" and data["package_format"] == "v2"
    jsonschema.validate(data, json.loads((DOCS / "cert.schema.json").read_text()))
    assert f"to {out}" in result.stdout
    # the one verdict sentence `models certify` ends with (issue 45), its coverage said: the
    # digests are the writer's, taken while writing, not hashed again; no verify cache was
    # given, so none is named
    said = verdict(CertReport.model_validate(data)).sentence()
    assert said in result.stdout.splitlines()
    n = len(data["digests"])
    assert said.startswith(f"certification passed (digests: {n} of {n} hashed while writing, "
                           "not re-read): ") and "verify cache" not in said
    assert data["coverage"]["digests"] | {"written": n, "cached": 0, "hashed": 0,
                                          "mode": "written"} == data["coverage"]["digests"]
    manifest = json.loads((out / "model-package.json").read_text())
    assert f"package_id: {manifest['package_id']}" in result.stdout
    # the warnings the sentence counts are listed below it, not hidden (issue 45)
    warnings = [f for f in data["findings"] if f["severity"] == "warning"]
    assert warnings, data["findings"]
    listed = [line for line in result.stdout.splitlines() if line.startswith("  warning ")]
    assert listed == [f"  warning {f['code']}: {f['message']}" for f in warnings]


def test_json_prints_only_the_report_and_quiet_prints_nothing(tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    as_json = package("write", str(source), "--out-dir", str(tmp_path / "a"), "--model-id",
                      MODEL_ID, "--format", "v1", "--json")
    assert as_json.exit_code == 0 and as_json.stderr == ""
    assert json.loads(as_json.stdout)["package_format"] == "v1"
    quiet = package("write", str(source), "--out-dir", str(tmp_path / "b"), "--model-id",
                    MODEL_ID, "--quiet")
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""


def test_refusals_exit_2_and_say_why(tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    out = tmp_path / "pkg"
    assert package("write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID,
                   "-q").exit_code == 0
    again = package("write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID)
    assert again.exit_code == 2 and "refused (existing_manifest)" in again.stderr
    no_id = package("write", str(source), "--out-dir", str(tmp_path / "x"))
    assert no_id.exit_code == 2 and "--model-id" in no_id.stderr
    missing = package("write", str(tmp_path / "nope.gguf"), "--out-dir", str(tmp_path / "y"),
                      "--model-id", MODEL_ID)
    assert missing.exit_code == 2 and "no such file" in missing.stderr
    bad_format = package("write", str(source), "--out-dir", str(tmp_path / "z"),
                         "--format", "v3")
    assert bad_format.exit_code == 2
    assert not any((tmp_path / d).exists() for d in "xyz")


def test_a_failing_hook_exits_2_without_a_manifest(tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    result = package("write", str(tiny_source(tmp_path)), "--out-dir", str(out),
                     "--model-id", MODEL_ID, "--after-artifact-command", "exit 3")
    assert result.exit_code == 2 and "aborted (hook_failed)" in result.stderr
    assert "--resume" in result.stderr and not (out / "model-package.json").exists()


def test_a_certification_failure_exits_1_and_the_card_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No input `package write` accepts makes its own package fail (it refuses those before
    writing, tests/writer/test_write_refusals.py), so the fault is made here: the package is
    certified against another model's GGUF, as if the source had been swapped under it."""
    from dataclasses import replace

    import meshcert.writer.certify_step as step

    other, _ = moe_sources(tmp_path / "other")
    certify = step.certify_package
    monkeypatch.setattr(step, "certify_package", lambda request, progress=None: certify(
        replace(request, source_gguf=str(other), source_facts=None), progress))
    out, report = tmp_path / "pkg", tmp_path / "cert.json"
    result = package("write", str(tiny_source(tmp_path)), "--out-dir", str(out),
                     "--model-id", MODEL_ID, "--report-out", str(report))
    assert result.exit_code == 1, result.output
    assert json.loads(report.read_text())["status"] == "failed"
    assert "- Result: failed" in (out / "README.md").read_text()


def test_the_card_result_says_what_was_not_covered(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Without llama-cpp-python its parser never saw the files: the card's result says so as
    the verdict does, not a bare "passed" (a full run's card says just "passed")."""
    from meshcert.certify.workers import llama_library

    out, full = tmp_path / "pkg", tmp_path / "full"
    source = tiny_source(tmp_path)
    done = package("write", str(source), "--out-dir", str(full), "--model-id", MODEL_ID, "-q")
    assert done.exit_code == 0, done.output
    has_llama = llama_library.find_library() is not None
    if has_llama:
        assert "\n- Result: passed\n" in (full / "README.md").read_text()
    monkeypatch.setattr(llama_library, "package_dirs", lambda: [])  # as if not installed
    done = package("write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID)
    assert done.exit_code == 0, done.output
    assert "certification passed (digests: " in done.stdout
    assert "; llama.cpp not available): " in done.stdout
    assert "\n- Result: passed (llama.cpp not available)\n" in (out / "README.md").read_text()


def test_write_delivers_the_certification_in_every_report_format(tmp_path: Path) -> None:
    """As `models certify` does: --html, --md, --junit, --sarif beside --report-out."""
    files = {fmt: tmp_path / f"cert.{fmt}" for fmt in ("html", "md", "junit", "sarif")}
    flags = [x for fmt, path in files.items() for x in (f"--{fmt}", str(path))]
    result = package("write", str(tiny_source(tmp_path)), "--out-dir", str(tmp_path / "pkg"),
                     "--model-id", MODEL_ID, "-q", *flags)
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "<html" in files["html"].read_text().lower()
    assert "passed" in files["md"].read_text()
    assert files["junit"].read_text().startswith("<?xml")
    sarif = json.loads(files["sarif"].read_text())
    schema = json.loads((REPO / "tests/reports/data/sarif-schema-2.1.0.json").read_text())
    jsonschema.validate(sarif, schema)
    assert sarif["runs"][0]["tool"]["driver"]["name"] == "meshcert"


def test_a_report_path_it_cannot_write_is_refused_before_writing(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    out = tmp_path / "pkg"
    result = package("write", str(tiny_source(tmp_path)), "--out-dir", str(out),
                     "--model-id", MODEL_ID, "--report-out", str(blocker / "cert.json"))
    assert result.exit_code == 2 and "refused" in result.stderr, result.output
    assert str(blocker) in result.stderr and not out.exists()


def test_a_report_folder_gone_while_writing_exits_3(tmp_path: Path) -> None:
    """The folder was there when the write began; the hook puts a file in its place."""
    reports = tmp_path / "reports"
    reports.mkdir()
    result = package("write", str(tiny_source(tmp_path)), "--out-dir", str(tmp_path / "pkg"),
                     "--model-id", MODEL_ID, "--report-out", str(reports / "cert.json"),
                     "--after-artifact-command", f"rm -rf {reports} && touch {reports}")
    assert result.exit_code == 3 and "cannot write" in result.stderr, result.output


def test_ctrl_c_exits_130_without_a_manifest_and_resume_finishes(tmp_path: Path) -> None:
    source, out = tiny_source(tmp_path), tmp_path / "pkg"
    started = tmp_path / "hook-started"
    # the hook signals that the write is inside its work, then blocks until the writer stops
    # its process group: the test waits on that event, never on a time, so load cannot
    # change the verdict (pytest-timeout bounds a hang; interrupt_at ends the hook with the
    # rest of the tree whatever happens)
    hook = f"touch {started} && exec sleep 3600"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = start_interruptible([sys.executable, "-m", "meshcert", "package", "write",
                                str(source), "--out-dir", str(out), "--model-id", MODEL_ID,
                                "--after-artifact-command", hook], cwd=tmp_path, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err = interrupt_at(proc, started)
    assert proc.returncode == 130, err
    assert "interrupted: no manifest written" in err
    assert not (out / "model-package.json").exists()
    resumed = package("write", str(source), "--out-dir", str(out), "--model-id", MODEL_ID,
                      "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "re-verified" in resumed.stdout and "rewritten" not in resumed.stdout


def test_plan_prints_artifacts_and_stage_fetches_and_its_json_follows_the_schema(
        tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    table = package("plan", str(model), "--stages", "3", "--projector", str(projector))
    assert table.exit_code == 0, table.output
    # the 4-layer model over 3 stages: layers 0-1, 2, 3, as the --layers flag writes them
    assert "shared/metadata.gguf" in table.stdout
    assert "stage-2  --layers 3..4  --stage 2/3" in table.stdout
    as_json = package("plan", str(model), "--stages", "2", "--format", "v1", "--json")
    data = json.loads(as_json.stdout)
    jsonschema.validate(data, json.loads((DOCS / "package-plan.schema.json").read_text()))
    first, second = data["stages"]
    assert "shared/embeddings.gguf" in first["artifacts"]
    assert "shared/output.gguf" in second["artifacts"]
    assert second["artifacts"][0] == "shared/metadata.gguf"
    sizes = {a["path"]: a["byte_size"] for a in data["artifacts"]}
    assert first["byte_size"] == sum(sizes[p] for p in first["artifacts"])
    # what plan says is what write writes
    planned = json.loads(package("plan", str(model), "--stages", "2", "--projector",
                                 str(projector), "--json").stdout)
    sizes = {a["path"]: a["byte_size"] for a in planned["artifacts"]}
    out = tmp_path / "pkg"
    assert package("write", str(model), "--out-dir", str(out), "--model-id", MODEL_ID,
                   "--projector", str(projector), "-q").exit_code == 0
    assert {p: (out / p).stat().st_size for p in sizes} == sizes
    assert len(sizes) == len(json.loads((out / "model-package.json").read_text())[
        "artifact_catalog"]["entries"])


def test_the_checked_in_plan_schema_matches_the_models() -> None:
    """Regenerate with: python3 scripts/generate.py package-plan-schema"""
    checked_in = json.loads((DOCS / "package-plan.schema.json").read_text())
    assert checked_in == json.loads(json.dumps(plan_json_schema()))
