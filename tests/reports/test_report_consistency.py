"""`report render` and `report merge` check what they are given: a cert.json whose verdict its
own contents deny (a status edited to `passed` beside an error and a failed gate, a slice whose
scope was widened), one of a newer schema, or a slice given twice is refused with exit 2 naming
the contradiction, and nothing is rendered or merged. Real reports, of every kind, pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from meshcert.certify.merge import Slice, merge_slices
from meshcert.certify.report import CertReport
from meshcert.cli import app
from meshcert.reports.consistency import contradictions
from tests.certify.test_scope import build
from tests.conftest import PackageFactory, certify_dir
from tests.support.attestations import flip_last_byte

runner = CliRunner()
N = 3


def run(*args: str) -> Result:
    return runner.invoke(app, list(args))


def failed_report(packages: PackageFactory, tmp_path: Path) -> Path:
    """A real failed cert.json: one layer flipped, so an error and a failed package gate."""
    info = packages.build("llama")
    flip_last_byte(info.root / "layers" / "layer-001.gguf")
    out = tmp_path / "cert.json"
    done = run("models", "certify", str(info.root), "--package-only", "--report-out", str(out),
               "-q")
    assert done.exit_code == 1, done.output
    return out


def edit(path: Path, change: Any) -> Path:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2))
    return path


def test_a_status_edited_to_passed_is_refused_naming_the_contradiction(
        packages: PackageFactory, tmp_path: Path) -> None:
    cert = edit(failed_report(packages, tmp_path), lambda d: d.update(status="passed"))
    html = tmp_path / "out.html"
    result = run("report", "render", str(cert), "--html", str(html))
    assert result.exit_code == 2
    assert result.output.startswith(f"refused: {cert}: its verdict contradicts its own "
                                    "contents, so it is not rendered")
    assert "status is 'passed', but its gates make it 'failed' (package gate failed)" in \
        result.output
    assert "artifact_sha256_mismatch" in result.output
    assert not html.exists() and "Certification passed" not in result.output


def test_a_gate_edited_too_is_still_refused(packages: PackageFactory, tmp_path: Path) -> None:
    def forge(data: dict[str, Any]) -> None:
        data["status"] = "passed"
        data["package_gate"].update(status="passed", details=None)

    cert = edit(failed_report(packages, tmp_path), forge)
    result = run("report", "render", str(cert), "--md", str(tmp_path / "out.md"))
    assert result.exit_code == 2
    assert "the package gate is 'passed', but the report holds 1 error finding(s) " \
        "(artifact_sha256_mismatch)" in result.output


def test_findings_removed_too_still_leave_the_failed_check(packages: PackageFactory,
                                                           tmp_path: Path) -> None:
    def forge(data: dict[str, Any]) -> None:
        data["status"] = "passed"
        data["package_gate"].update(status="passed", details=None)
        data["findings"] = [f for f in data["findings"] if f["severity"] != "error"]

    cert = edit(failed_report(packages, tmp_path), forge)
    result = run("report", "render", str(cert), "--sarif", str(tmp_path / "x.sarif"))
    assert result.exit_code == 2
    assert "status is 'passed', but check(s) artifact_files is failed or in error" in \
        result.output


def test_a_newer_schema_is_refused_clearly(packages: PackageFactory, tmp_path: Path) -> None:
    cert = edit(failed_report(packages, tmp_path), lambda d: d.update(schema_version=2))
    result = run("report", "render", str(cert), "--html", str(tmp_path / "x.html"))
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"refused: {cert} is a cert.json of schema_version 2, newer than the 1 this meshcert "
        "reads: upgrade meshcert to render it (nothing of it was read)")


def test_a_real_failed_report_renders_as_failed(packages: PackageFactory,
                                                tmp_path: Path) -> None:
    cert = failed_report(packages, tmp_path)
    result = run("report", "render", str(cert), "--html", str(tmp_path / "x.html"))
    assert result.exit_code == 0, result.output


# --- merge inputs -------------------------------------------------------------------------------

def certified_slices(root: Path, out: Path) -> list[Path]:
    paths = []
    for i in range(N):
        target = out / f"stage-{i}.json"
        done = run("models", "certify", str(root), "--package-only", "--stage", f"{i}/{N}",
                   "--report-out", str(target), "-q")
        assert done.exit_code == 0, done.output
        paths.append(target)
    return paths


@pytest.fixture
def stages(tmp_path: Path) -> list[Path]:
    return certified_slices(build(tmp_path / "pkg", "v1").root, tmp_path)


def test_a_slice_whose_scope_was_widened_is_refused(stages: list[Path]) -> None:
    """Stage 0 edited to claim every layer (as if it covered the whole package)."""
    first = json.loads(stages[0].read_text())
    total = first["layer_count"]
    edit(stages[0], lambda d: d["scope"].update(layer_end=total))
    result = run("report", "merge", str(stages[0]), str(stages[2]))
    assert result.exit_code == 2
    assert f"{stages[0]}: its verdict contradicts its own contents, so it is not merged" in \
        result.output
    assert f"scope says layers 0..{total}, but it did not check" in result.output


def test_a_slice_whose_scope_claims_artifacts_it_never_hashed_is_refused(
        stages: list[Path]) -> None:
    def forge(data: dict[str, Any]) -> None:
        data["scope"].update(layer_end=data["layer_count"], artifacts=data["declared_artifacts"])

    edit(stages[0], forge)
    result = run("report", "merge", str(stages[0]))
    assert result.exit_code == 2
    assert "it has no digest of and no finding about" in result.output


def test_the_same_slice_twice_is_named(stages: list[Path], tmp_path: Path) -> None:
    twice = run("report", "merge", str(stages[0]), str(stages[1]), str(stages[0]))
    assert twice.exit_code == 2
    assert f"{stages[0]} is given twice (layers 0..2" in twice.output
    copy = tmp_path / "copy.json"
    shutil.copy(stages[1], copy)
    copied = run("report", "merge", *map(str, stages), str(copy))
    assert copied.exit_code == 2
    assert f"{copy} is the same slice as {stages[1]}" in copied.output


def test_slices_of_two_packages_are_one_finding_naming_both(stages: list[Path],
                                                            tmp_path: Path) -> None:
    other = certified_slices(build(tmp_path / "other", "v1", model_id="meshcert/another").root,
                             tmp_path / "o")
    result = run("report", "merge", str(stages[0]), str(other[1]), str(stages[2]), "--json")
    assert result.exit_code == 1
    merged = json.loads(result.output)
    own = [f for f in merged["findings"] if f["check"] == "slice_merge"]
    assert [f["code"] for f in own] == ["slice_package_mismatch"]
    mine, theirs = (json.loads(p.read_text())["manifest_sha256"] for p in (stages[0], other[1]))
    assert mine in own[0]["message"] and theirs in own[0]["message"]


# --- real reports of every kind are consistent ---------------------------------------------------

def test_real_reports_of_every_kind_have_no_contradiction(packages: PackageFactory,
                                                          tmp_path: Path) -> None:
    info = packages.build("llama")
    passed = certify_dir(info.root)
    strict = certify_dir(packages.build("llama", layers=2).root, strict=True)
    sized = certify_dir(info.root, verify_sha256=False)
    certify_dir(info.root, verify_cache=str(tmp_path / "cache.json"))
    cached = certify_dir(info.root, verify_cache=str(tmp_path / "cache.json"))
    assert cached.cache_hits and cached.coverage is not None
    pkg = build(tmp_path / "v2", "v2")
    slices = [Slice(p.name, CertReport.model_validate_json(p.read_text()))
              for p in certified_slices(pkg.root, tmp_path / "s")]
    merged = merge_slices(slices)
    partial = merge_slices(slices[:2])
    flip_last_byte(info.root / "layers" / "layer-001.gguf")
    failed = certify_dir(info.root)
    for report in (passed, strict, sized, cached, *(s.report for s in slices), merged, partial,
                   failed):
        assert contradictions(report) == [], (report.input, report.status)
    assert {passed.status, merged.status, partial.status, failed.status} == {
        "passed", "incomplete", "failed"}


def test_a_merged_report_whose_coverage_was_edited_is_refused(stages: list[Path],
                                                              tmp_path: Path) -> None:
    merged = tmp_path / "merged.json"
    done = run("report", "merge", str(stages[0]), str(stages[2]), "--report-out", str(merged))
    assert done.exit_code == 3, done.output

    def forge(data: dict[str, Any]) -> None:
        data["status"] = "passed"
        data["package_gate"].update(status="passed", details=None)
        data["findings"] = [f for f in data["findings"] if f["code"] != "coverage_missing"]
        data["checks"] = [c for c in data["checks"] if c["name"] != "slice_merge"]
        data["merge"]["verified_artifacts"] = data["merge"]["declared_artifacts"]

    edit(merged, forge)
    result = run("report", "render", str(merged), "--md", str(tmp_path / "m.md"))
    assert result.exit_code == 2
    assert "but the merge names layers or artifacts no slice verified" in result.output
    assert "verified and 2 unverified of" in result.output


def test_a_partial_coverage_edited_away_is_refused(packages: PackageFactory,
                                                   tmp_path: Path) -> None:
    """The verdict's qualifier comes from `coverage`: a sizes-only pass whose coverage was
    edited to `hashed`, or a cached one whose cache count was zeroed, would render as a plain
    "passed"; each is refused naming what the report itself holds."""
    info = packages.build("llama")
    sized = tmp_path / "sized.json"
    done = run("models", "certify", str(info.root), "--package-only", "--no-verify-sha256",
               "--report-out", str(sized), "-q")
    assert done.exit_code == 0, done.output

    def hashed(data: dict[str, Any]) -> None:
        d = data["coverage"]["digests"]
        d.update(mode="hashed", hashed=d["artifacts"], sizes_only=0)

    result = run("report", "render", str(edit(sized, hashed)), "--md", str(tmp_path / "s.md"))
    assert result.exit_code == 2 and not (tmp_path / "s.md").exists()
    assert "verification is 'size-only', but coverage says digests 'hashed'" in result.output
    assert "digest(s) were taken (hashed, cached or written), but the report holds 0" in \
        result.output

    cache, cached = tmp_path / "cache.json", tmp_path / "cached.json"
    for _ in range(2):  # the second run takes every digest from the cache
        done = run("models", "certify", str(info.root), "--package-only", "--verify-cache",
                   str(cache), "--report-out", str(cached), "-q")
        assert done.exit_code == 0, done.output
    assert json.loads(cached.read_text())["coverage"]["digests"]["mode"] == "cache"

    def uncached(data: dict[str, Any]) -> None:
        d = data["coverage"]["digests"]
        d.update(mode="hashed", hashed=d["hashed"] + d["cached"], cached=0)

    result = run("report", "render", str(edit(cached, uncached)), "--md", str(tmp_path / "c.md"))
    assert result.exit_code == 2
    assert "digest(s) from a verify cache, but coverage says digests 'hashed'" in result.output
