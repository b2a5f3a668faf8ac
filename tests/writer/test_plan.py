"""The planner: from the source's headers alone, every artifact with its tensors and exact
size, as writer.md lays the formats out."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from meshcert.core.errors import Refused
from meshcert.testing import ModelSpec, TensorSpec, glm_dsa_spec, llama_spec, moe_mtp_spec
from meshcert.writer.plan import by_budget, mtp_layers, plan_package
from meshcert.writer.source import load_local
from tests.writer.builders import moe_sources, tiny_source, write_package


def test_v2_routes_every_non_layer_tensor_to_common_and_sorts_every_part(
        tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    plan = plan_package(load_local(str(model), [str(projector)]), "v2")
    by_id = {a.artifact_id: a for a in plan.all_artifacts()}
    assert list(by_id)[:3] == ["metadata", "common", "layer-00000"]
    assert {p.name for p in by_id["common"].placements} == {
        "token_embd.weight", "rope_freqs.weight", "output_norm.weight", "output.weight"}
    for i in range(4):
        names = [p.name for p in by_id[f"layer-{i:05d}"].placements]
        assert names == sorted(names) and all(n.startswith(f"blk.{i}.") for n in names)
    assert by_id["projector-00000"].path == "projectors/projector-00000.gguf"
    assert plan.sidecar_names == {"projector-00000": "mmproj-tiny-F16.gguf"}
    assert [a.artifact_id for a in plan.payload] == sorted(a.artifact_id for a in plan.payload)


def test_v2_parts_copy_the_source_entries_and_add_only_a_missing_alignment(
        tmp_path: Path) -> None:
    source = load_local(str(tiny_source(tmp_path)))
    assert "general.alignment" not in source.header.kv  # gguf-py does not write it
    plan = plan_package(source, "v2")
    raw = [entry for _, entry in source.kv_entries()]
    for a in plan.payload:
        assert a.kv_pieces[:len(raw)] == raw
        assert len(a.kv_pieces) == len(raw) + 1  # + general.alignment
        assert not any(b"skippy." in piece[:64] for piece in a.kv_pieces)


def test_the_budget_cuts_a_group_greedily_in_name_order_and_keeps_one_big_tensor_whole(
        tmp_path: Path) -> None:
    source = load_local(str(tiny_source(tmp_path)))
    # a layer holds 82,432 tensor bytes; token_embd is 81,920, output 40,960
    plan = plan_package(source, "v2", max_artifact_bytes=60_000)
    parts = {a.artifact_id: a for a in plan.payload}
    assert [p.name for p in parts["common-part00"].placements] == ["output.weight",
                                                                   "output_norm.weight"]
    assert [p.name for p in parts["common-part01"].placements] == ["token_embd.weight"]
    for a in parts.values():
        assert "-part" in a.path
        assert a.tensor_bytes <= 60_000 or len(a.placements) == 1
        last = a.placements[-1]
        assert a.size == a.data_offset + last.offset + last.n_bytes  # no trailing padding
    layer0 = [p.name for a in plan.payload if a.artifact_id.startswith("layer-00000")
              for p in a.placements]
    assert layer0 == sorted(t.name for t in source.tensors if t.name.startswith("blk.0."))
    roomy = plan_package(source, "v2", max_artifact_bytes=90_000)
    whole = [a for a in roomy.payload if a.role == "layer"]
    assert [a.path for a in whole] == [f"layers/layer-{i:05d}.gguf" for i in range(4)]
    assert all(a.size % a.alignment == 0 for a in whole)  # whole files end padded


def test_by_budget_is_greedy_and_never_empty(tmp_path: Path) -> None:
    tensors = load_local(str(tiny_source(tmp_path))).tensors
    sizes = [[t.n_bytes for t in g] for g in by_budget(tensors, 10_000)]
    assert all(sizes) and sum(map(sum, sizes)) == sum(t.n_bytes for t in tensors)
    assert all(sum(g) <= 10_000 or len(g) == 1 for g in sizes)


def test_v1_names_layers_with_three_digits_and_copies_metadata_role_tensors_everywhere(
        tmp_path: Path) -> None:
    model, projector = moe_sources(tmp_path)
    plan = plan_package(load_local(str(model), [str(projector)]), "v1")
    paths = [a.path for a in plan.artifacts]
    assert paths == ["shared/metadata.gguf", "shared/embeddings.gguf", "shared/output.gguf",
                     *(f"layers/layer-{i:03d}.gguf" for i in range(4)),
                     "projectors/mmproj-tiny-F16.gguf"]
    fragments = [a for a in plan.artifacts if a.role != "projector"]
    assert all("rope_freqs.weight" in {p.name for p in a.placements} for a in fragments)
    assert [p.name for p in fragments[0].placements] == ["rope_freqs.weight"]
    assert {p.name for p in fragments[2].placements} == {"output.weight", "output_norm.weight",
                                                        "rope_freqs.weight"}


@pytest.mark.parametrize("fmt", ["v2", "v1"])
def test_planned_sizes_are_the_written_sizes(tmp_path: Path, fmt: str) -> None:
    model, projector = moe_sources(tmp_path)
    result = write_package(model, tmp_path / "pkg", fmt=fmt, projectors=[str(projector)],
                           max_artifact_bytes=30_000)
    planned = {a.path: a.size for a in result.plan.all_artifacts()}
    written = {p: os.path.getsize(result.root / p) for p in planned}
    assert written == planned
    assert result.plan.total_bytes == sum(written.values())


def test_mtp_is_written_only_for_one_nextn_layer_that_is_the_last(tmp_path: Path) -> None:
    assert mtp_layers(load_local(str(tiny_source(tmp_path / "a", moe_mtp_spec())))) == [3]
    assert mtp_layers(load_local(str(tiny_source(tmp_path / "b", llama_spec())))) == []


def _nextn_at(layer: int) -> ModelSpec:
    spec = glm_dsa_spec(block_count=4)
    spec.tensors = [TensorSpec(t.name.replace("blk.3.nextn", f"blk.{layer}.nextn"), t.shape,
                               t.ggml_type) for t in spec.tensors]
    return spec


@pytest.mark.parametrize(("edit", "words"), [  # each edits the spec's metadata
    (lambda s: s.kv.__setitem__("glm-dsa.nextn_predict_layers", 2), "is 2"),
    (lambda s: s.kv.pop("glm-dsa.nextn_predict_layers"), "inconsistent"),
    (lambda s: s.kv.__setitem__("glm-dsa.nextn_predict_layers", 0), "inconsistent"),
])
def test_deeper_or_inconsistent_mtp_evidence_is_refused(
        tmp_path: Path, edit: Callable[[ModelSpec], object], words: str) -> None:
    spec = glm_dsa_spec(block_count=4)
    edit(spec)
    with pytest.raises(Refused) as err:
        plan_package(load_local(str(tiny_source(tmp_path, spec))), "v2")
    assert err.value.code == "unsupported_mtp" and words in err.value.message


def test_nextn_tensors_outside_the_last_layer_are_refused(tmp_path: Path) -> None:
    with pytest.raises(Refused, match="inconsistent"):
        plan_package(load_local(str(tiny_source(tmp_path, _nextn_at(1)))), "v1")


def test_a_block_count_that_disagrees_with_the_tensors_is_refused(tmp_path: Path) -> None:
    spec = llama_spec(block_count=4)
    spec.kv["llama.block_count"] = 5
    with pytest.raises(Refused, match=r"layer\(s\) 4 hold no tensors"):
        plan_package(load_local(str(tiny_source(tmp_path / "more", spec))), "v2")
    spec.kv["llama.block_count"] = 3
    with pytest.raises(Refused, match="names layer 3"):
        plan_package(load_local(str(tiny_source(tmp_path / "fewer", spec))), "v2")
