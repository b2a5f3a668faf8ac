"""--layers A..B / --stage I/N: a node certifies exactly the slice it loads (v1 and v2).

The manifest-wide checks still run; the artifact checks (and the source's stat, hash and header
reads) touch only the slice's artifacts, so a damaged artifact of another slice goes unnoticed
here and is caught by exactly the slice that owns it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.scope import ScopeRequest, parse_layers, parse_stage
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.testing import llama_spec, write_source_gguf
from tests.support.splits import SplitPackage, split_v1, split_v2

LAYERS = 5


def build(base: Path, fmt: str, model_id: str = "meshcert/tiny-GGUF") -> SplitPackage:
    source = write_source_gguf(llama_spec(block_count=LAYERS), base / "source.gguf")
    split = split_v1 if fmt == "v1" else split_v2
    return split(source, base / fmt, model_id=f"{model_id}:{fmt}")


def certify(root: Path, scope: ScopeRequest | None = None) -> CertReport:
    return certify_package(CertRequest(model=str(root), options=CertOptions(scope=scope)))


def layer_file(pkg: SplitPackage, index: int) -> str:
    return next(p for p in pkg.files if p.startswith("layers/") and f"{index:03d}.gguf" in p)


def errors(report: CertReport) -> list[tuple[str, str | None]]:
    return [(f.code, f.path) for f in report.findings if f.severity == "error"]


@pytest.fixture(params=["v1", "v2"])
def pkg(request: pytest.FixtureRequest, tmp_path: Path) -> SplitPackage:
    return build(tmp_path, request.param)


def test_parse_layers_and_stage() -> None:
    assert parse_layers("2..5") == ScopeRequest(layer_start=2, layer_end=5)
    assert parse_stage(" 1/4 ") == ScopeRequest(stage_index=1, stage_count=4)
    for bad in ("5..5", "6..2", "2-5", "a..b", ""):
        with pytest.raises(ValueError):
            parse_layers(bad)
    for bad in ("4/4", "0/0", "1", "x/2"):
        with pytest.raises(ValueError):
            parse_stage(bad)


def test_stage_slices_follow_the_plan_and_hash_only_their_parts(pkg: SplitPackage) -> None:
    whole = certify(pkg.root)
    assert whole.status == "passed", errors(whole)
    assert whole.scope is None
    assert set(whole.digests) == set(pkg.files)
    seen: set[str] = set()
    for i, (start, end) in enumerate([(0, 2), (2, 4), (4, 5)]):  # base 1, first 2 get one more
        report = certify(pkg.root, parse_stage(f"{i}/3"))
        assert report.status == "passed", errors(report)
        assert report.scope is not None
        assert (report.scope.layer_start, report.scope.layer_end) == (start, end)
        assert report.scope.stage == f"{i}/3"
        assert sorted(report.digests) == report.scope.artifacts  # hashed exactly the slice
        layers = {p for p in report.scope.artifacts if p.startswith("layers/")}
        assert layers == {layer_file(pkg, n) for n in range(start, end)}
        assert report.digests.items() <= whole.digests.items()
        seen |= set(report.scope.artifacts)
    assert seen == set(pkg.files)


def test_a_tampered_layer_is_caught_by_exactly_the_slice_that_owns_it(
        pkg: SplitPackage) -> None:
    tampered = layer_file(pkg, 3)
    path = pkg.files[tampered]
    data = bytearray(path.read_bytes())
    data[-1] ^= 0xFF  # tensor data: the header still parses, the size is unchanged
    path.write_bytes(bytes(data))
    verdicts = {i: certify(pkg.root, parse_stage(f"{i}/3")) for i in range(3)}
    assert errors(verdicts[1]) == [("artifact_sha256_mismatch", tampered)]
    assert verdicts[0].status == verdicts[2].status == "passed"


def test_a_missing_file_of_another_slice_is_not_reported(pkg: SplitPackage) -> None:
    gone = layer_file(pkg, 4)
    pkg.files[gone].unlink()  # the node serving layers 0..2 never downloaded it
    assert certify(pkg.root, parse_layers("0..2")).status == "passed"
    last = certify(pkg.root, parse_layers("4..5"))
    assert ("missing_artifact", gone) in errors(last)


def test_a_range_outside_the_package_fails_naming_it(pkg: SplitPackage) -> None:
    for scope in (parse_layers("3..9"), parse_stage("5/6")):
        report = certify(pkg.root, scope)
        assert report.status == "failed"
        assert [c for c, _ in errors(report)] == ["invalid_scope"]
        assert report.digests == {}


def test_a_stage_of_a_plan_with_more_stages_than_layers_is_refused(pkg: SplitPackage) -> None:
    """No smaller plan is made up: stage 0 of a 9-stage plan does not exist for 5 layers."""
    report = certify(pkg.root, parse_stage("0/9"))
    [(code, _)] = errors(report)
    assert code == "invalid_scope"
    [message] = [f.message for f in report.findings if f.code == "invalid_scope"]
    assert "cannot be split into 9 stages" in message
