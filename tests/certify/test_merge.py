"""`report merge`: the N slice reports of a real package (v1 and v2) give the whole-package verdict;
missing coverage is `incomplete` naming what nobody verified; slices that disagree are `failed`."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.checks import all_checks
from meshcert.certify.merge import SCOPE_FREE_CHECKS, Slice, layer_ranges, merge_slices
from meshcert.certify.report import CertReport
from meshcert.certify.scope import parse_stage
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.verdict import verdict as one_verdict
from meshcert.certify.view import CertOptions
from tests.certify.test_scope import build, certify, errors, layer_file
from tests.support.splits import SplitPackage

N = 3


@pytest.fixture(params=["v1", "v2"])
def pkg(request: pytest.FixtureRequest, tmp_path: Path) -> SplitPackage:
    return build(tmp_path, request.param)


def slices(pkg: SplitPackage, stages: range | list[int] = range(N)) -> list[Slice]:
    return [Slice(f"stage-{i}.json", certify(pkg.root, parse_stage(f"{i}/{N}")))
            for i in stages]


def verdict(report: CertReport) -> list[tuple[str, str | None, int | None]]:
    """What the whole-package run and the merged slices must agree on."""
    return sorted({(f.code, f.path, f.layer_index) for f in report.findings
                   if f.check != "slice_merge"}, key=str)


def merge_codes(report: CertReport) -> list[str]:
    return [f.code for f in report.findings if f.check == "slice_merge"]


def test_all_slices_merge_to_the_whole_package_verdict(pkg: SplitPackage) -> None:
    whole = certify(pkg.root)
    merged = merge_slices(slices(pkg))
    assert whole.status == merged.status == "passed", errors(merged)
    assert verdict(merged) == verdict(whole)
    assert merged.digests == whole.digests  # every byte hashed, each artifact once per slice
    # what a node applies and which mesh-llm loads it come from the manifest, slice or not
    assert (merged.node_defaults, merged.mesh_llm) == (whole.node_defaults, whole.mesh_llm)
    assert (whole.mesh_llm is not None) == (whole.package_format == "v2")
    assert merge_codes(merged) == []
    assert merged.merge is not None
    assert merged.merge.verified_artifacts == merged.merge.declared_artifacts == len(pkg.files)
    assert [(s.layer_start, s.layer_end) for s in merged.merge.slices] == [(0, 2), (2, 4), (4, 5)]
    assert CertReport.model_validate_json(merged.to_json()) == merged
    # each slice says it is a slice; the merge covers the package, every artifact hashed
    parts = slices(pkg)
    assert all(s.report.coverage is not None and s.report.coverage.scope.kind == "slice"
               for s in parts)
    assert all("not a package verdict" in one_verdict(s.report).sentence() for s in parts)
    assert merged.coverage is not None and merged.coverage.scope.kind == "package"
    assert (merged.coverage.scope.artifacts_checked, merged.coverage.digests.mode) == (
        len(pkg.files), "hashed")
    assert one_verdict(merged).coverage == ()


def test_a_missing_slice_is_incomplete_naming_its_layers(pkg: SplitPackage) -> None:
    merged = merge_slices(slices(pkg, [0, 2]))
    assert merged.status == "incomplete"
    assert merged.merge is not None
    assert merged.merge.unverified_layers == [2, 3]
    assert merged.merge.unverified_artifacts == sorted(layer_file(pkg, i) for i in (2, 3))
    [gap] = [f for f in merged.findings if f.code == "coverage_missing"]
    assert "layers 2..4" in gap.message and layer_file(pkg, 3) in gap.message


def test_a_slice_of_another_package_fails_the_merge(pkg: SplitPackage, tmp_path: Path) -> None:
    fmt = "v2" if "layers/layer-00000.gguf" in pkg.files else "v1"
    other = build(tmp_path / "other", fmt, model_id="meshcert/another-GGUF")
    odd = Slice("odd.json", certify(other.root, parse_stage(f"1/{N}")))
    mine = slices(pkg, [0, 2])
    merged = merge_slices([mine[0], odd, mine[1]])
    assert merged.status == "failed"
    [mismatch] = [f for f in merged.findings if f.code == "slice_package_mismatch"]
    assert mismatch.message.startswith("odd.json certifies another package than stage-0.json")
    assert "manifest_sha256" in mismatch.message
    # both identities named, and nothing else: no digest, verdict or coverage noise
    assert f"{odd.report.manifest_sha256!r}" in mismatch.message
    assert f"{mine[0].report.manifest_sha256!r}" in mismatch.message
    assert merge_codes(merged) == ["slice_package_mismatch"]


def test_digests_that_disagree_on_a_shared_artifact_fail_naming_the_slices(
        pkg: SplitPackage) -> None:
    first = slices(pkg, [0])
    shared = pkg.files["shared/metadata.gguf"]  # every slice hashes the metadata
    data = bytearray(shared.read_bytes())
    data[-1] ^= 0x01  # a node whose copy differs (padding: the header still parses)
    shared.write_bytes(bytes(data))
    rest = slices(pkg, [1, 2])
    merged = merge_slices(first + rest)
    assert merged.status == "failed"
    [conflict] = [f for f in merged.findings if f.code == "slice_digest_mismatch"]
    assert conflict.path == "shared/metadata.gguf"
    assert "stage-0.json:" in conflict.message and "stage-1.json, stage-2.json:" in conflict.message
    failed = [f.message for f in merged.findings if f.code == "slice_failed"]
    assert [m.split(" ")[0] for m in failed] == ["stage-1.json", "stage-2.json"]


def test_a_tampered_layer_fails_the_merge_through_exactly_its_slice(pkg: SplitPackage) -> None:
    tampered = layer_file(pkg, 4)
    path = pkg.files[tampered]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF
    path.write_bytes(bytes(data))
    whole = certify(pkg.root)
    merged = merge_slices(slices(pkg))
    assert whole.status == merged.status == "failed"
    assert verdict(merged) == verdict(whole)
    [failed] = [f.message for f in merged.findings if f.code == "slice_failed"]
    assert failed.startswith("stage-2.json (layers 4..5) failed: artifact_sha256_mismatch")


def test_a_whole_package_report_counts_as_one_slice_covering_everything(
        pkg: SplitPackage) -> None:
    merged = merge_slices([Slice("whole.json", certify(pkg.root)), *slices(pkg, [1])])
    assert merged.status == "passed", errors(merged)


def test_no_slice_is_a_usage_error() -> None:
    with pytest.raises(ValueError):
        merge_slices([])


def test_scope_free_checks_are_registered_checks() -> None:
    assert not SCOPE_FREE_CHECKS - {c.name for c in all_checks()}


def test_layer_ranges_are_half_open() -> None:
    assert layer_ranges([0, 1, 2, 5, 7, 8]) == "0..3, 5..6, 7..9"
    assert layer_ranges([]) == ""


def test_slices_run_with_different_rules_disagree_on_the_manifest_verdict(
        pkg: SplitPackage) -> None:
    first = Slice("stage-0.json", certify_package(CertRequest(model=str(pkg.root), options=(
        CertOptions(scope=parse_stage(f"0/{N}"), runtime_abi="0.1.54")))))
    merged = merge_slices([first, *slices(pkg, [1, 2])])
    assert merged.status == "failed"
    disagree = [f.message for f in merged.findings if f.code == "slice_verdict_mismatch"]
    assert len(disagree) == 2 and all("stage-0.json disagree" in m for m in disagree)


def test_a_report_without_a_manifest_cannot_be_merged(pkg: SplitPackage, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    merged = merge_slices([*slices(pkg), Slice("empty.json", certify(empty))])
    assert merged.status == "failed"
    assert "slice_not_merged" in merge_codes(merged)
