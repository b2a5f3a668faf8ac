"""The exact artifact list of a package, from the source's headers alone (pure).

Every artifact's path, id, role, tensors (in the order they are stored, each with its offset in
the data section), metadata entries and exact byte size, header and alignment padding
included, for both formats as writer.md describes them:

- v2: `shared/metadata.gguf` (the carrier, built later from the parts' directories),
  `shared/common.gguf` (every non-layer tensor) or `shared/common-partNN.gguf` past the
  `max_artifact_bytes` budget, `layers/layer-NNNNN.gguf` or `-partMM`, cut greedily in
  sorted-name order (a single tensor over the budget stays whole), tensors sorted by name in
  every payload part, the source's metadata entries copied raw (split.* left out,
  general.alignment added if missing, no skippy.* keys), `-partNN` files without trailing
  padding; projectors `projectors/projector-NNNNN.gguf`, copied verbatim; publisher files
  (meshcert.writer.publisher) `metadata/<basename>`, copied verbatim, listed last in the given
  order.
- v1: `shared/metadata.gguf` (all metadata, the metadata-role tensors),
  `shared/embeddings.gguf`, `shared/output.gguf` (output + final norm),
  `layers/layer-NNN.gguf`; metadata-role tensors copied into every fragment; every fragment
  repeats the source's entries, then general.alignment, then the skippy.slice.* keys;
  projectors `projectors/<name>.gguf`.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Literal

from meshcert.core.errors import Refused
from meshcert.core.gguf import wire
from meshcert.writer.artifact import (
    ALIGNMENT_KEY,
    Artifact,
    Format,
    PackagePlan,
    Placement,
    alignment_entry,
    base_entries,
)
from meshcert.writer.carrier import plan_carrier
from meshcert.writer.publisher import PublisherPlan
from meshcert.writer.roles import is_nextn, role_of
from meshcert.writer.source import SourceModel, SourceTensor

V2Layout = Literal["common", "legacy"]  # legacy: the earlier shared/embeddings + shared/output
DEFAULT_MAX_ARTIFACT_BYTES = 8 << 30
__all__ = ["DEFAULT_MAX_ARTIFACT_BYTES", "Artifact", "Format", "PackagePlan", "V2Layout",
           "plan_package"]


def _layers(source: SourceModel) -> tuple[dict[int, list[SourceTensor]], list[SourceTensor],
                                          list[SourceTensor], list[SourceTensor],
                                          list[SourceTensor]]:
    """(per layer, embeddings, output, final norm, metadata-role), each in source order."""
    layers: dict[int, list[SourceTensor]] = defaultdict(list)
    groups: dict[str, list[SourceTensor]] = defaultdict(list)
    count = source.block_count
    for t in source.tensors:
        role = role_of(t.name)
        if role.layer is not None:
            if role.layer >= count:
                raise Refused(f"tensor {t.name} names layer {role.layer}, but "
                              f"{source.architecture}.block_count is {count}", code="bad_source")
            layers[role.layer].append(t)
        else:
            groups[role.name].append(t)
    empty = [i for i in range(count) if not layers.get(i)]
    if empty:
        raise Refused(f"{source.architecture}.block_count is {count} but layer(s) "
                      f"{', '.join(map(str, empty[:8]))} hold no tensors", code="bad_source")
    return layers, groups["embedding"], groups["output"], groups["final_norm"], \
        groups["metadata"]


def mtp_layers(source: SourceModel) -> list[int]:
    """[L-1] when `{arch}.nextn_predict_layers == 1` agrees with `blk.<L-1>.nextn.*` tensors;
    [] with neither; any other evidence is refused (writer.md, "MTP")."""
    depth = source.kv_int("nextn_predict_layers")
    found = sorted({r.layer for t in source.tensors if is_nextn(t.name)
                    if (r := role_of(t.name)).layer is not None})
    last = source.block_count - 1
    if not depth and not found:
        return []
    if depth == 1 and found == [last]:
        return [last]
    key = f"{source.architecture}.nextn_predict_layers"
    if depth is not None and depth > 1:
        raise Refused(f"{key} is {depth}: only one NextN/MTP layer "
                      "(prediction depth 1) can be written", code="unsupported_mtp")
    raise Refused(f"inconsistent NextN/MTP evidence: {key} is {depth!r}, "
                  f"nextn tensors are in layer(s) {found or 'none'} (the last layer is {last})",
                  code="unsupported_mtp")


def _placed(tensors: list[SourceTensor], alignment: int) -> list[Placement]:
    out, cursor = [], 0
    for t in tensors:
        offset = wire.align(cursor, alignment)
        out.append(Placement(t, offset))
        cursor = offset + t.n_bytes
    return out


def by_budget(tensors: list[SourceTensor], budget: int) -> list[list[SourceTensor]]:
    """Greedy cut in the given (sorted-name) order; one tensor over the budget stays whole."""
    groups: list[list[SourceTensor]] = [[]]
    size = 0
    for t in tensors:
        if groups[-1] and size + t.n_bytes > budget:
            groups.append([])
            size = 0
        groups[-1].append(t)
        size += t.n_bytes
    return groups


def plan_package(source: SourceModel, fmt: Format = "v2", *,
                 max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES,
                 v2_layout: V2Layout = "common", publisher: PublisherPlan | None = None,
                 request_defaults: dict[str, Any] | None = None) -> PackagePlan:
    """`publisher` and `request_defaults` (v2 only) are decided beforehand
    (meshcert.writer.publisher, meshcert.writer.generation_defaults)."""
    if max_artifact_bytes <= 0:
        raise Refused("--max-artifact-bytes must be > 0", code="usage")
    mtp = mtp_layers(source)
    if fmt == "v1":
        if publisher is not None or request_defaults is not None:
            raise Refused("publisher metadata and generation defaults are v2 "
                          "manifest fields: --format v1 cannot carry them", code="usage")
        return _plan_v1(source, mtp)
    plan = _plan_v2(source, mtp, max_artifact_bytes, v2_layout)
    if publisher is not None:
        plan.artifacts += [Artifact(known.artifact_id, known.package_path, "publisher", None,
                                    [], [], source.alignment, publisher=item)
                           for known, item in publisher.files]
        plan.publisher_entries = list(publisher.entries)
        plan.publisher_defaults = publisher.defaults
    plan.request_defaults = request_defaults
    return plan


# --- v2 ---------------------------------------------------------------------------------------
def _plan_v2(source: SourceModel, mtp: list[int], budget: int, layout: V2Layout
             ) -> PackagePlan:
    layers, embeddings, output, final_norm, metadata = _layers(source)
    entries = base_entries(source, drop_alignment=False)
    if ALIGNMENT_KEY not in source.header.kv:
        entries.append(alignment_entry(source))
    align = source.alignment
    payload: list[Artifact] = []

    def add(stem: str, path_stem: str, role: str, layer: int | None,
            tensors: list[SourceTensor], cut: bool = True) -> None:
        ordered = sorted(tensors, key=lambda t: t.name)
        total = sum(t.n_bytes for t in ordered)
        if not cut or total <= budget:
            payload.append(Artifact(stem, f"{path_stem}.gguf", role, layer,
                                    _placed(ordered, align), entries, align))
            return
        for i, group in enumerate(by_budget(ordered, budget)):
            payload.append(Artifact(f"{stem}-part{i:02d}", f"{path_stem}-part{i:02d}.gguf",
                                    role, layer, _placed(group, align), entries, align,
                                    trailing_padding=False))

    if layout == "common":
        add("common", "shared/common", "shared.common", None,
            embeddings + output + final_norm + metadata)
    else:
        add("embeddings", "shared/embeddings", "shared.embeddings", None, embeddings, cut=False)
        add("output", "shared/output", "shared.output", None, output + final_norm, cut=False)
        if metadata:
            add("common", "shared/common", "shared.common", None, metadata, cut=False)
    for index in range(source.block_count):
        add(f"layer-{index:05d}", f"layers/layer-{index:05d}", "layer", index, layers[index])
    payload.sort(key=lambda a: a.artifact_id)
    projectors = [Artifact(f"projector-{i:05d}", f"projectors/projector-{i:05d}.gguf",
                           "projector", None, [], [], align, projector=p)
                  for i, p in enumerate(source.projectors)]
    plan = PackagePlan("v2", source, payload + projectors, source.block_count, mtp,
                       sidecar_names={a.artifact_id: p.name
                                      for a, p in zip(projectors, source.projectors,
                                                      strict=True)})
    plan.carrier = plan_carrier(plan)
    return plan


# --- v1 ---------------------------------------------------------------------------------------
STAGE_METADATA, STAGE_EMBEDDINGS, STAGE_OUTPUT, STAGE_LAYER_BASE = 0, 1, 2, 1000


def _slice_entries(stage: int, start: int, end: int, embeddings: bool, output: bool,
                   shards: int) -> list[bytes]:
    out = [wire.kv("skippy.slice.stage_index", wire.INT32, stage),
           wire.kv("skippy.slice.layer_start", wire.INT32, start),
           wire.kv("skippy.slice.layer_end", wire.INT32, end),
           wire.kv("skippy.slice.include_embeddings", wire.BOOL, embeddings),
           wire.kv("skippy.slice.include_output", wire.BOOL, output)]
    if shards > 1:  # fragments merged from a sharded source say so
        out += [wire.kv("skippy.package.materialized", wire.BOOL, True),
                wire.kv("skippy.package.part_count", wire.UINT32, shards)]
    return out


def _plan_v1(source: SourceModel, mtp: list[int]) -> PackagePlan:
    layers, embeddings, output, final_norm, metadata = _layers(source)
    base = base_entries(source, drop_alignment=True) + [alignment_entry(source)]
    align, count, shards = source.alignment, source.block_count, len(source.files)
    order = {t.name: i for i, t in enumerate(source.tensors)}

    def fragment(artifact_id: str, path: str, role: str, layer: int | None,
                 owned: list[SourceTensor], slice_keys: list[bytes]) -> Artifact:
        tensors = sorted(owned + metadata, key=lambda t: order[t.name])  # source order
        return Artifact(artifact_id, path, role, layer, _placed(tensors, align),
                        base + slice_keys, align)

    artifacts = [
        fragment("metadata", "shared/metadata.gguf", "shared.metadata", None, [],
                 _slice_entries(STAGE_METADATA, 0, 0, False, False, shards)),
        fragment("embeddings", "shared/embeddings.gguf", "shared.embeddings", None, embeddings,
                 _slice_entries(STAGE_EMBEDDINGS, 0, 0, True, False, shards)),
        fragment("output", "shared/output.gguf", "shared.output", None, output + final_norm,
                 _slice_entries(STAGE_OUTPUT, count, count, False, True, shards)),
    ]
    for i in range(count):
        artifacts.append(fragment(f"layer-{i:03d}", f"layers/layer-{i:03d}.gguf", "layer", i,
                                  layers[i], _slice_entries(STAGE_LAYER_BASE + i, i, i + 1,
                                                            False, False, shards)))
    names: set[str] = set()
    for i, p in enumerate(source.projectors):
        if p.name in names or not p.name.endswith(".gguf"):
            raise Refused(f"projector {p.name}: names must be unique .gguf files", code="usage")
        names.add(p.name)
        artifacts.append(Artifact(f"projector-{i:05d}", f"projectors/{p.name}", "projector",
                                  None, [], [], align, projector=p))
    return PackagePlan("v1", source, artifacts, count, mtp)
