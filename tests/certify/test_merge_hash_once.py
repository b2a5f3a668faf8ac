"""`--stage I/N --hash-once`: the N slices of a plan hash each artifact exactly once (a part several
stages load is hashed by one of them and checked, size and header, by the others), and `report
merge` takes each digest from the slice that hashed it; a merge in which some artifact was hashed
by no slice is `incomplete` (coverage_missing), never `passed`."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.merge import Slice, merge_slices
from meshcert.certify.scope import parse_stage
from tests.certify.test_scope import build, certify, errors
from tests.support.splits import SplitPackage

N = 3


@pytest.fixture(params=["v1", "v2"])
def pkg(request: pytest.FixtureRequest, tmp_path: Path) -> SplitPackage:
    return build(tmp_path, request.param)


def hash_once_slices(pkg: SplitPackage) -> list[Slice]:
    return [Slice(f"stage-{i}.json", certify(pkg.root, parse_stage(f"{i}/{N}", hash_once=True)))
            for i in range(N)]


def shared_part(pkg: SplitPackage) -> str:
    """The part every stage loads: v2's shared/common.gguf, v1's shared/metadata.gguf."""
    return "shared/common.gguf" if "shared/common.gguf" in pkg.files else "shared/metadata.gguf"


def test_each_artifact_is_hashed_by_exactly_one_slice(pkg: SplitPackage) -> None:
    whole = certify(pkg.root)
    parts = hash_once_slices(pkg)
    hashed = [sorted(s.report.digests) for s in parts]
    assert sorted(p for share in hashed for p in share) == sorted(pkg.files)  # each once
    assert sum(pkg.files[p].stat().st_size for share in hashed for p in share) == sum(
        f.stat().st_size for f in pkg.files.values())
    shared = shared_part(pkg)
    loaders = [s for s in parts if s.report.scope and shared in s.report.scope.artifacts]
    assert len(loaders) == N  # every stage loads and checks it ...
    assert [shared in s.report.digests for s in loaders].count(True) == 1  # ... one hashes it
    for s in parts:
        assert s.report.status == "passed", errors(s.report)
        assert s.report.scope is not None
        assert s.report.scope.hashed_artifacts == sorted(s.report.digests)
    merged = merge_slices(parts)
    assert merged.status == "passed", errors(merged)
    assert merged.digests == whole.digests
    assert merged.merge is not None
    assert merged.merge.verified_artifacts == merged.merge.declared_artifacts == len(pkg.files)
    assert sum(s.artifacts for s in merged.merge.slices) == len(pkg.files)


def test_a_damaged_shared_part_fails_through_the_slice_that_hashes_it(
        pkg: SplitPackage) -> None:
    shared = shared_part(pkg)
    path = pkg.files[shared]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01  # the last byte: tensor data or padding, the header still parses
    path.write_bytes(bytes(data))
    parts = hash_once_slices(pkg)
    failing = [s.name for s in parts if ("artifact_sha256_mismatch", shared) in errors(s.report)]
    assert len(failing) == 1
    merged = merge_slices(parts)
    assert merged.status == "failed"
    assert ("artifact_sha256_mismatch", shared) in errors(merged)


def test_a_merge_in_which_no_slice_hashed_an_artifact_is_incomplete(pkg: SplitPackage) -> None:
    parts = hash_once_slices(pkg)
    shared = shared_part(pkg)
    # an in-process fault no run of one plan produces (slices of two different plans, or of
    # two meshcert versions that share differently): the slice that hashed the shared part
    # reports it as checked only
    owner = next(i for i, s in enumerate(parts) if shared in s.report.digests)
    report = parts[owner].report
    assert report.scope is not None and report.scope.hashed_artifacts is not None
    scope = report.scope.model_copy(update={"hashed_artifacts": [
        p for p in report.scope.hashed_artifacts if p != shared]})
    parts[owner] = Slice(parts[owner].name, report.model_copy(update={
        "scope": scope, "digests": {p: d for p, d in report.digests.items() if p != shared}}))
    merged = merge_slices(parts)
    assert merged.status == "incomplete"
    assert merged.merge is not None and merged.merge.unverified_artifacts == [shared]
    assert merged.merge.unverified_layers == []
    [gap] = [f for f in merged.findings if f.code == "coverage_missing"]
    assert gap.message.startswith("no slice hashed 1 of") and shared in gap.message
    assert shared not in merged.digests


def test_without_hash_once_every_slice_hashes_what_it_loads(pkg: SplitPackage) -> None:
    shared = shared_part(pkg)
    parts = [certify(pkg.root, parse_stage(f"{i}/{N}")) for i in range(N)]
    assert all(shared in r.digests for r in parts)
    assert all(r.scope is not None and r.scope.hashed_artifacts is None for r in parts)
