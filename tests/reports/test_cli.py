"""`meshcert report render`, the --html/--md/--junit options and the demo outputs."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.cli import app
from meshcert.evidence.report import EvidenceReport
from tests.conftest import PackageFactory
from tests.reports.checks_html import assert_self_contained
from tests.reports.junit_shape import validate

runner = CliRunner()


def _outputs(base: Path) -> list[str]:
    return ["--html", str(base / "r.html"), "--md", str(base / "r.md"),
            "--junit", str(base / "sub" / "r.xml")]


def _check_outputs(base: Path) -> None:
    assert_self_contained((base / "r.html").read_text())
    assert (base / "r.md").read_text().startswith(("## ", "# "))  # a report heading
    validate((base / "sub" / "r.xml").read_text())


def test_render_cert_json(tmp_path: Path, failed_report: CertReport) -> None:
    source = tmp_path / "cert.json"
    source.write_text(failed_report.to_json())
    result = runner.invoke(app, ["report", "render", str(source), *_outputs(tmp_path)])
    assert result.exit_code == 0, result.output
    _check_outputs(tmp_path)
    assert "html:" in result.output


def test_render_evidence_json(tmp_path: Path, evidence_reports: dict[str, EvidenceReport]
                              ) -> None:
    source = tmp_path / "decisions.json"
    source.write_text(evidence_reports["synthetic"].to_json())
    result = runner.invoke(app, ["report", "render", str(source), *_outputs(tmp_path)])
    assert result.exit_code == 0, result.output
    _check_outputs(tmp_path)


def test_render_cert_json_as_sarif(tmp_path: Path, failed_report: CertReport) -> None:
    source = tmp_path / "cert.json"
    source.write_text(failed_report.to_json())
    result = runner.invoke(app, ["report", "render", str(source), "--sarif",
                                 str(tmp_path / "r.sarif")])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"sarif: {tmp_path / 'r.sarif'}\n"
    [run] = json.loads((tmp_path / "r.sarif").read_text())["runs"]
    assert [r["ruleId"] for r in run["results"]] == [f.code for f in failed_report.findings]


def test_render_quiet_and_json_keep_stdout_clean(tmp_path: Path,
                                                 failed_report: CertReport) -> None:
    source = tmp_path / "cert.json"
    source.write_text(failed_report.to_json())
    quiet = runner.invoke(app, ["report", "render", str(source), "--md", str(tmp_path / "q.md"),
                                "--quiet"])
    assert (quiet.exit_code, quiet.stdout) == (0, "") and (tmp_path / "q.md").is_file()
    as_json = runner.invoke(app, ["report", "render", str(source), "--md",
                                  str(tmp_path / "j.md"), "--json"])
    assert as_json.exit_code == 0
    assert CertReport.model_validate_json(as_json.stdout) == failed_report


def test_an_evidence_report_renders_to_sarif_too(
        tmp_path: Path, evidence_reports: dict[str, EvidenceReport]) -> None:
    source = tmp_path / "decisions.json"
    source.write_text(evidence_reports["synthetic"].to_json())
    result = runner.invoke(app, ["report", "render", str(source), "--sarif",
                                 str(tmp_path / "r.sarif")])
    assert result.exit_code == 0, result.output
    sarif = json.loads((tmp_path / "r.sarif").read_text())
    assert sarif["version"] == "2.1.0" and sarif["runs"][0]["tool"]["driver"]["name"] == "meshcert"


def test_a_report_file_that_cannot_be_written_exits_3_naming_it(
        tmp_path: Path, evidence_reports: dict[str, EvidenceReport]) -> None:
    source = tmp_path / "decisions.json"
    source.write_text(evidence_reports["synthetic"].to_json())
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    result = runner.invoke(app, ["report", "render", str(source), "--sarif",
                                 str(blocker / "r.sarif")])
    assert result.exit_code == 3
    assert f"error: cannot write {blocker}" in result.stderr
    assert "Traceback" not in result.output


def test_render_needs_an_output(tmp_path: Path, failed_report: CertReport) -> None:
    source = tmp_path / "cert.json"
    source.write_text(failed_report.to_json())
    result = runner.invoke(app, ["report", "render", str(source)])
    assert result.exit_code == 2
    flat = " ".join(result.output.replace("\u2502", " ").split())
    assert "at least one of --html, --md, --junit" in flat


def test_render_rejects_unknown_json_without_traceback(tmp_path: Path) -> None:
    for name, content in (("other.json", '{"a": 1}'), ("broken.json", "{"),
                          ("cert.json", '{"package_gate": 1}')):
        source = tmp_path / name
        source.write_text(content)
        result = runner.invoke(app, ["report", "render", str(source), "--html",
                                     str(tmp_path / "x.html")])
        assert result.exit_code == 2, result.output
        assert result.output.startswith("error: ")
        assert "Traceback" not in result.output
        assert not (tmp_path / "x.html").exists()
    missing = runner.invoke(app, ["report", "render", str(tmp_path / "nope.json"), "--md",
                                  str(tmp_path / "x.md")])
    assert missing.exit_code == 2 and "cannot read" in missing.output


def test_models_certify_writes_reports(tmp_path: Path, packages: PackageFactory) -> None:
    info = packages.build("llama", layers=3)
    result = runner.invoke(app, ["models", "certify", str(info.root), "--package-only",
                                 "--quiet", "--report-out", str(tmp_path / "cert.json"),
                                 *_outputs(tmp_path)])
    assert result.exit_code in (0, 1), result.output
    _check_outputs(tmp_path)
    assert (tmp_path / "cert.json").is_file()


def test_evidence_report_writes_reports(tmp_path: Path) -> None:
    from meshcert.evidence.examplegen import example_files

    files = [str(p) for p in example_files()]
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir",
                                 str(tmp_path / "out"), *_outputs(tmp_path)])
    assert result.exit_code == 0, result.output
    _check_outputs(tmp_path)


def test_demo_writes_html_next_to_json(tmp_path: Path) -> None:
    from meshcert.demo import run_demo

    result = run_demo(tmp_path / "demo")
    html = {label: path for label, path in result.outputs.items() if path.suffix == ".html"}
    cert_html = tmp_path / "demo" / "cert.html"
    evidence_html = tmp_path / "demo" / "evidence" / "evidence.html"
    assert set(html.values()) == {cert_html, evidence_html}
    assert (tmp_path / "demo" / "cert.json").is_file()
    assert (tmp_path / "demo" / "evidence" / "decisions.json").is_file()
    for path in html.values():
        assert_self_contained(path.read_text())
