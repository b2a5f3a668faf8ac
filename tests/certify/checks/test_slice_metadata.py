"""The keys the v1 writer records in each fragment (`skippy.slice.*`) agree with the manifest's
role of the file; `split.*` keys left in a fragment are a warning."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from gguf import GGUFValueType

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import run_checks
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from tests.certify.checks.gguf_edits import KV, Typed, rewrite_gguf
from tests.certify.v2_packages import build_v1, refresh_v1_artifact
from tests.conftest import certify_dir, codes

V = GGUFValueType
I32, BOOL = V.INT32, V.BOOL


def test_the_writer_records_each_fragments_slice(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, layers=4)
    expected = {
        "shared/metadata.gguf": (0, 0, 0, False, False),
        "shared/embeddings.gguf": (1, 0, 0, True, False),
        "shared/output.gguf": (2, 4, 4, False, True),
        "layers/layer-002.gguf": (1002, 2, 3, False, False),
    }
    for rel, values in expected.items():
        header = read_header_file(pkg.root / rel)
        assert isinstance(header, GGUFHeader), header
        keys = ("stage_index", "layer_start", "layer_end", "include_embeddings",
                "include_output")
        assert tuple(header.kv[f"skippy.slice.{k}"] for k in keys) == values, rel
        assert [header.kv_types[f"skippy.slice.{k}"] for k in keys] == [5, 5, 5, 7, 7]
    assert certify_dir(pkg.root).status == "passed"


# (file, key, wrong value, its GGUF type, what the manifest's role needs)
DISAGREEMENTS = [
    ("layers/layer-002.gguf", "stage_index", 1003, I32, "1002 (i32)"),
    ("layers/layer-002.gguf", "layer_start", 3, I32, "2 (i32)"),
    ("layers/layer-002.gguf", "layer_end", 2, I32, "3 (i32)"),
    ("layers/layer-002.gguf", "include_embeddings", True, BOOL, "false (bool)"),
    ("layers/layer-002.gguf", "include_output", True, BOOL, "false (bool)"),
    ("shared/metadata.gguf", "stage_index", 1, I32, "0 (i32)"),
    ("shared/embeddings.gguf", "include_embeddings", False, BOOL, "true (bool)"),
    ("shared/output.gguf", "layer_start", 0, I32, "4 (i32)"),
    ("shared/output.gguf", "include_output", False, BOOL, "true (bool)"),
    ("layers/layer-002.gguf", "stage_index", 1002, V.UINT32, "1002 (i32)"),
    ("shared/output.gguf", "include_output", 1, V.UINT8, "true (bool)"),
]


@pytest.mark.parametrize(("rel", "key", "value", "vtype", "needed"), DISAGREEMENTS,
                         ids=[f"{r.split('/')[-1]}-{k}-{v}-{t.name}"
                              for r, k, v, t, _ in DISAGREEMENTS])
def test_a_slice_key_that_disagrees_with_the_manifest_fails(
        tmp_path: Path, rel: str, key: str, value: Any, vtype: GGUFValueType,
        needed: str) -> None:
    pkg = build_v1(tmp_path, layers=4)

    def edit(kv: KV) -> None:
        kv[f"skippy.slice.{key}"] = Typed(value, vtype)

    rewrite_gguf(pkg.root / rel, edit)
    refresh_v1_artifact(pkg, rel)
    report = certify_dir(pkg.root)
    [found] = [f for f in report.findings if f.code == "slice_metadata_mismatch"]
    assert found.path == rel and found.severity == "error"
    assert f"skippy.slice.{key}" in found.message and rel in found.message
    assert f"needs {needed}" in found.message
    assert report.status == "failed"


def test_a_package_whose_writer_records_no_slice_keys_passes(tmp_path: Path) -> None:
    """The keys are checked when present; a writer that records none (an older build, another
    tool) is not held to them."""
    pkg = build_v1(tmp_path)

    def forget(kv: KV) -> None:
        for key in [k for k in kv if k.startswith("skippy.slice.")]:
            del kv[key]

    for rel in pkg.files:
        rewrite_gguf(pkg.root / rel, forget)
        refresh_v1_artifact(pkg, rel)
    output = read_header_file(pkg.root / "shared/output.gguf")
    assert isinstance(output, GGUFHeader), output
    assert not any(k.startswith("skippy.slice.") for k in output.kv)
    report = certify_dir(pkg.root)
    assert "slice_metadata_mismatch" not in codes(report) and report.status == "passed"


def _stale(kv: KV) -> None:
    kv["split.no"] = Typed(0, V.UINT16)
    kv["split.count"] = Typed(3, V.UINT16)
    kv["split.tensors.count"] = Typed(46, V.INT32)


def test_a_stale_split_count_warns(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path)
    rewrite_gguf(pkg.root / "layers/layer-001.gguf", _stale)
    refresh_v1_artifact(pkg, "layers/layer-001.gguf")
    report = certify_dir(pkg.root)
    [found] = [f for f in report.findings if f.code == "stale_split_metadata"]
    assert found.severity == "warning" and found.path == "layers/layer-001.gguf"
    assert "split.count = 3" in found.message and "sibling shards" in found.message
    assert report.status == "passed"  # a warning, not a failure


def test_stale_split_keys_in_every_fragment_are_one_warning(tmp_path: Path) -> None:
    """What an older writer build leaves in every fragment cut from a sharded source."""
    pkg = build_v1(tmp_path)
    for rel in pkg.files:
        rewrite_gguf(pkg.root / rel, _stale)
        refresh_v1_artifact(pkg, rel)
    [found] = [f for f in certify_dir(pkg.root).findings if f.code == "stale_split_metadata"]
    assert f"{len(pkg.files)} fragment(s)" in found.message


def test_the_writer_strips_split_keys_from_every_fragment(tmp_path: Path) -> None:
    """meshcert's writer is the newer writer: split.* never reach a fragment;
    what an older build left in is the rewritten package of the test above."""
    from tests.certify.v2_packages import MODEL_ID, tiny_source
    from tests.support.splits import split_v1

    def one_shard(kv: KV) -> None:  # what llama-gguf-split writes into a set of one
        kv["split.no"] = Typed(0, V.UINT16)
        kv["split.count"] = Typed(1, V.UINT16)
        kv["split.tensors.count"] = Typed(46, V.INT32)

    source = tiny_source(tmp_path)
    rewrite_gguf(source, one_shard)
    source = source.rename(source.with_name("shard-00001-of-00001.gguf"))
    stripped = split_v1(source, tmp_path / "new", model_id=MODEL_ID)
    assert "stale_split_metadata" not in codes(certify_dir(stripped.root))


def test_a_shard_inspected_on_its_own_keeps_its_split_keys_unremarked(tmp_path: Path) -> None:
    """`models inspect` of a gguf-split shard: split.* are the shard's by right, no package."""
    from tests.certify.checks.gguf_edits import single_file_view
    from tests.certify.v2_packages import tiny_source

    shard = tiny_source(tmp_path)
    rewrite_gguf(shard, _stale)
    view = single_file_view(shard)
    check = [c for c in all_checks() if c.name == "stale_split_metadata"]
    assert run_checks(view, check)[0] == []
