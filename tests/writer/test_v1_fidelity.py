"""The writer writes v1 fragments the way skippy-model-package does (writer.md):
all source KVs, then general.alignment and the skippy.slice.* keys; each fragment's own tensors
plus every metadata-role tensor, in source order."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tests.certify.v2_packages import MODEL_ID, build_v1, tiny_source
from tests.support.splits import read_source, split_v1, with_extra_tensors
from tests.writer.builders import header

ROPE = "rope_freqs.weight"


def test_every_fragment_holds_its_tensors_and_the_metadata_role_copies(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    names = {rel: [t.name for t in header(pkg.root / rel).tensors]
             for rel in pkg.files}
    assert names["shared/metadata.gguf"] == [ROPE]
    assert names["shared/embeddings.gguf"] == [ROPE, "token_embd.weight"]
    assert names["shared/output.gguf"] == [ROPE, "output_norm.weight", "output.weight"]
    assert names["layers/layer-001.gguf"][0] == ROPE
    assert all(n.startswith("blk.1.") for n in names["layers/layer-001.gguf"][1:])


def test_the_manifest_counts_the_copies_as_the_writer_reads_them_back(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    metadata = pkg.manifest["shared"]["metadata"]
    assert metadata["tensor_count"] == 1 and metadata["tensor_bytes"] == 32


def test_every_fragment_repeats_all_kvs_then_alignment_then_the_slice(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path)
    source = list(read_source(pkg.source_path).kv)
    keys = list(header(pkg.root / "layers/layer-000.gguf").kv)
    assert keys[:len(source)] == source  # the tokenizer too, as gguf_set_kv copies it
    assert keys[len(source):] == ["general.alignment", "skippy.slice.stage_index",
                                  "skippy.slice.layer_start", "skippy.slice.layer_end",
                                  "skippy.slice.include_embeddings",
                                  "skippy.slice.include_output"]


def test_extra_tensors_go_first_and_keep_everything_else(tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    out = with_extra_tensors(source, tmp_path / "with-rope.gguf",
                             [(ROPE, np.ones(8, dtype=np.float32))])
    before, after = read_source(source), read_source(out)
    assert [t.name for t in after.tensors] == [ROPE, *(t.name for t in before.tensors)]
    assert after.kv == before.kv
    data = out.read_bytes()
    rope = after.tensors[0]
    start = after.data_offset + rope.offset
    assert np.frombuffer(data[start:start + rope.n_bytes], dtype=np.float32).tolist() == [1.0] * 8


def test_a_split_of_the_extended_source_carries_the_tensor_everywhere(tmp_path: Path) -> None:
    source = with_extra_tensors(tiny_source(tmp_path), tmp_path / "rope.gguf",
                                [(ROPE, np.ones(8, dtype=np.float32))])
    pkg = split_v1(source, tmp_path / "pkg", model_id=MODEL_ID)
    assert all(header(pkg.root / rel).tensors[0].name == ROPE for rel in pkg.files)
