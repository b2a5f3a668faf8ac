"""The v2 metadata carrier `shared/metadata.gguf` (package-v2.md), as bytes (pure).

The source's metadata (split.* left out, general.alignment added when absent), then the typed
locator keys (`skippy.package.metadata_only` bool, `locator_schema` u32 1, `part_count` u32,
and per tensor `tensor_part` u32, `tensor_offset` u64, `tensor_size` u64, `tensor_alignment`
u32), then the whole model's tensor directory in the order of the payload parts sorted by id,
and no data: the file ends at its data offset. The directory's own offsets are laid out as if
the data followed (they point past the carrier's end, by design); the locators say where each
tensor really is. The writer builds the carrier from the payload parts' re-opened headers
(`rows_from_headers`); the planner from the plan (`rows_from_plan`): both give the same bytes
when the parts are as planned, so the planned size is exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from meshcert.certify.formats.v2_carrier import (
    LOCATOR_SCHEMA,
    METADATA_ONLY,
    PART_COUNT,
    SUPPORTED_LOCATOR_SCHEMA,
    TENSOR_ALIGNMENT,
    TENSOR_OFFSET,
    TENSOR_PART,
    TENSOR_SIZE,
)
from meshcert.core.gguf import wire
from meshcert.core.gguf.model import GGUFHeader
from meshcert.writer.artifact import (
    ALIGNMENT_KEY,
    CARRIER_ID,
    CARRIER_PATH,
    Artifact,
    PackagePlan,
    alignment_entry,
    base_entries,
)


@dataclass(frozen=True)
class DirectoryRow:
    name: str
    shape: tuple[int, ...]
    ggml_type: int
    n_bytes: int
    part: int  # index into the payload parts sorted by id
    offset: int  # absolute, in that part
    alignment: int


def rows_from_plan(plan: PackagePlan) -> list[DirectoryRow]:
    return [DirectoryRow(p.name, p.source.info.shape, p.source.info.ggml_type, p.n_bytes, part,
                         a.data_offset + p.offset, a.alignment)
            for part, a in enumerate(plan.payload) for p in a.placements]


def rows_from_headers(plan: PackagePlan, headers: dict[str, GGUFHeader]) -> list[DirectoryRow]:
    """The directory as the written parts' own headers give it (keyed by artifact path)."""
    rows = []
    for part, a in enumerate(plan.payload):
        header = headers[a.path]
        for t in header.tensors:
            rows.append(DirectoryRow(t.name, t.shape, t.ggml_type, t.n_bytes, part,
                                     header.data_offset + t.offset, header.alignment))
    return rows


def carrier_artifact(plan: PackagePlan, rows: list[DirectoryRow]) -> Artifact:
    source = plan.source
    entries = base_entries(source, drop_alignment=False)
    if ALIGNMENT_KEY not in source.header.kv:
        entries.append(alignment_entry(source))
    entries += [
        wire.kv(METADATA_ONLY, wire.BOOL, True),
        wire.kv(LOCATOR_SCHEMA, wire.UINT32, SUPPORTED_LOCATOR_SCHEMA),
        wire.kv(PART_COUNT, wire.UINT32, len(plan.payload)),
        wire.kv_array(TENSOR_PART, wire.UINT32, [r.part for r in rows]),
        wire.kv_array(TENSOR_OFFSET, wire.UINT64, [r.offset for r in rows]),
        wire.kv_array(TENSOR_SIZE, wire.UINT64, [r.n_bytes for r in rows]),
        wire.kv_array(TENSOR_ALIGNMENT, wire.UINT32, [r.alignment for r in rows]),
    ]
    directory, cursor = [], 0
    for r in rows:
        offset = wire.align(cursor, source.alignment)
        directory.append(wire.tensor_info(r.name, r.shape, r.ggml_type, offset))
        cursor = offset + r.n_bytes
    return Artifact(CARRIER_ID, CARRIER_PATH, "shared.metadata", None, [], entries,
                    source.alignment, directory=directory)


def plan_carrier(plan: PackagePlan) -> Artifact:
    return carrier_artifact(plan, rows_from_plan(plan))
