"""The mesh workflow end to end through the CLI: `models certify --stage I/N` per node, then
`report merge` (exit status, merged cert.json, and the coverage map in HTML and Markdown)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from meshcert.certify.report import CertReport
from meshcert.certify.verdict import verdict
from meshcert.cli import app
from tests.certify.test_scope import build
from tests.reports.checks_html import assert_self_contained
from tests.reports.dom import parse
from tests.reports.junit_shape import validate

runner = CliRunner()
N = 3


def _certify_slices(root: Path, out: Path, *extra: str) -> list[str]:
    paths = []
    for i in range(N):
        target = out / f"stage-{i}.json"
        result = runner.invoke(app, ["models", "certify", str(root), "--package-only",
                                     "--stage", f"{i}/{N}", *extra, "--report-out", str(target),
                                     "-q"])
        assert result.exit_code == 0, result.output
        paths.append(str(target))
    return paths


def test_merge_all_slices_passes_and_renders_the_coverage_map(tmp_path: Path) -> None:
    pkg = build(tmp_path, "v2")
    paths = _certify_slices(pkg.root, tmp_path)
    out = tmp_path / "merged"
    result = runner.invoke(app, ["report", "merge", *paths, "--report-out", str(out / "m.json"),
                                 "--html", str(out / "m.html"), "--md", str(out / "m.md"),
                                 "--junit", str(out / "m.xml")])
    assert result.exit_code == 0, result.output
    assert "PASSED: 3 slice(s), 7/7 artifacts verified" in result.output
    merged = json.loads((out / "m.json").read_text())
    assert merged["status"] == "passed"
    # the merged verdict in the sentence `models certify` ends with, as every format states it
    said = verdict(CertReport.model_validate(merged)).sentence()
    assert said.startswith("certification passed: ") and said in result.output.splitlines()
    assert [s["stage"] for s in merged["merge"]["slices"]] == ["0/3", "1/3", "2/3"]
    page = assert_self_contained((out / "m.html").read_text())
    section = page.find("section", id="coverage")
    rows = section.find_all("tr", where=lambda n: "data-slice" in n.attrs)
    assert [r.attrs["data-slice"] for r in rows] == paths
    assert len(section.find_all("g", cls="slice-bar")) == N
    assert "### Slice coverage" in (out / "m.md").read_text()
    validate((out / "m.xml").read_text())


def test_merge_with_a_slice_missing_exits_incomplete(tmp_path: Path) -> None:
    pkg = build(tmp_path, "v1")
    paths = _certify_slices(pkg.root, tmp_path)
    result = runner.invoke(app, ["report", "merge", paths[0], paths[2], "--html",
                                 str(tmp_path / "m.html")])
    assert result.exit_code == 3, result.output
    assert "coverage_missing: no slice verified layers 2..4" in result.output
    assert any(line.startswith("certification incomplete: ")
               for line in result.output.splitlines())
    page = parse((tmp_path / "m.html").read_text())
    note = page.find("section", id="coverage").find("p", cls="note")
    assert "layers/layer-002.gguf" in note.text()


def test_merge_refuses_what_is_not_a_cert_report(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"hello": 1}')
    result = runner.invoke(app, ["report", "merge", str(bad)])
    assert result.exit_code == 2
    assert "not a meshcert report" in result.output


def test_certify_rejects_a_malformed_or_double_scope(tmp_path: Path) -> None:
    for args in (["--stage", "3/3"], ["--layers", "4..2"],
                 ["--stage", "0/2", "--layers", "0..1"], ["--stage", "0/2", "--source", "s.gguf"],
                 ["--hash-once"], ["--layers", "0..1", "--hash-once"]):
        result = runner.invoke(app, ["models", "certify", str(tmp_path), "--package-only",
                                     *args])
        assert result.exit_code == 2, (args, result.output)


def test_hash_once_slices_merge_and_a_slice_that_hashed_too_little_exits_incomplete(
        tmp_path: Path) -> None:
    pkg = build(tmp_path, "v2")
    paths = _certify_slices(pkg.root, tmp_path, "--hash-once")
    result = runner.invoke(app, ["report", "merge", *paths])
    assert result.exit_code == 0, result.output
    assert "PASSED: 3 slice(s), 7/7 artifacts verified" in result.output
    # a slice report whose share leaves shared/common.gguf out (written by hand: one plan's
    # slices always cover it) -> merged, it is an artifact no slice hashed
    owner = next(p for p in paths
                 if "shared/common.gguf" in json.loads(Path(p).read_text())["digests"])
    report = json.loads(Path(owner).read_text())
    report["scope"]["hashed_artifacts"].remove("shared/common.gguf")
    del report["digests"]["shared/common.gguf"]
    digests = report["coverage"]["digests"]  # its coverage says so too, or it is refused
    digests.update(mode="sizes_only", hashed=digests["hashed"] - 1,
                   sizes_only=digests["sizes_only"] + 1)
    Path(owner).write_text(json.dumps(report))
    result = runner.invoke(app, ["report", "merge", *paths])
    assert result.exit_code == 3, result.output
    assert "coverage_missing: no slice hashed 1 of 7 artifact(s)" in result.output
    assert "shared/common.gguf" in result.output
