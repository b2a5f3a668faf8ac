"""Composing a v1 stage from the fragments the real writer writes (meshcert.certify.materialize):
the
stage carries no split.* keys, so llama.cpp never looks for sibling shards; and each
metadata-role tensor the fragments repeat goes into the stage once."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.materialize import compose, write_gguf
from meshcert.certify.stages import certification_ranges
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from tests.certify.checks.gguf_edits import KV, Typed, rewrite_gguf
from tests.certify.checks.manifest_edits import real_view
from tests.certify.v2_packages import build_v1, refresh_v1_artifact

pytest.importorskip("llama_cpp")  # write_gguf re-opens the stage with llama.cpp's parser
SPLIT_KEYS = {"split.no", "split.count", "split.tensors.count"}


def _stale(kv: KV) -> None:
    from gguf import GGUFValueType as V

    kv["split.no"] = Typed(0, V.UINT16)
    kv["split.count"] = Typed(3, V.UINT16)
    kv["split.tensors.count"] = Typed(46, V.INT32)


def test_a_composed_stage_carries_no_split_keys(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path)
    for rel in pkg.files:
        rewrite_gguf(pkg.root / rel, _stale)
        refresh_v1_artifact(pkg, rel)
    metadata = read_header_file(pkg.root / "shared/metadata.gguf")
    assert isinstance(metadata, GGUFHeader), metadata
    assert set(metadata.kv) >= SPLIT_KEYS
    view = real_view(pkg)  # type: ignore[arg-type]
    for stage in certification_ranges(4):
        target = tmp_path / "stages" / f"{stage.stage_id}.gguf"
        write_gguf(target, compose(view, stage, 4))
        header = read_header_file(target)
        assert isinstance(header, GGUFHeader), header
        kv = header.kv
        assert not SPLIT_KEYS & set(kv), stage.stage_id
        assert kv["llama.block_count"] == 4  # the rest of the metadata is kept


def test_a_stage_takes_each_metadata_role_tensor_once(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    view = real_view(pkg)  # type: ignore[arg-type]
    for stage in certification_ranges(4):
        tensors = compose(view, stage, 4).tensors
        [rope] = [t for t in tensors if t.name == "rope_freqs.weight"]
        assert rope.file.endswith("shared/metadata.gguf"), stage.stage_id  # the first copy
        target = tmp_path / "stages" / f"{stage.stage_id}.gguf"
        write_gguf(target, compose(view, stage, 4))  # llama.cpp's parser re-opens it
        names = [t.name for t in read_header_file(target).tensors]  # type: ignore[union-attr]
        assert names.count("rope_freqs.weight") == 1
