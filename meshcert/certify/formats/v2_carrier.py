"""The v2 metadata carrier: its locator keys turned back into the tensor catalog (pure).

The carrier (`shared/metadata.gguf`) holds the model's metadata and complete tensor directory
but no tensor data; four per-tensor arrays, in directory order, say where each tensor's bytes
are: `skippy.package.tensor_part` (index into the payload artifacts sorted by id),
`tensor_offset` (absolute, in that artifact), `tensor_size` (stored length) and
`tensor_alignment`. `rebuild_catalog` joins them with the carrier's tensor infos and the
manifest's artifacts; whatever is missing or malformed is a problem for the checks to report
as `invalid_metadata_carrier`, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from meshcert.certify.manifest_model import ArtifactEntry, is_int
from meshcert.core.gguf.model import ArraySummary, GGUFHeader

KEY_PREFIX = "skippy.package."
METADATA_ONLY = KEY_PREFIX + "metadata_only"
LOCATOR_SCHEMA = KEY_PREFIX + "locator_schema"
PART_COUNT = KEY_PREFIX + "part_count"
TENSOR_PART = KEY_PREFIX + "tensor_part"
TENSOR_OFFSET = KEY_PREFIX + "tensor_offset"
TENSOR_SIZE = KEY_PREFIX + "tensor_size"
TENSOR_ALIGNMENT = KEY_PREFIX + "tensor_alignment"
LOCATOR_ARRAYS = (TENSOR_PART, TENSOR_OFFSET, TENSOR_SIZE, TENSOR_ALIGNMENT)
SUPPORTED_LOCATOR_SCHEMA = 1
CARRIER_PATH = "shared/metadata.gguf"  # where the v2 writer puts the carrier (id `metadata`)
# keys the writer removes from the source metadata (and the builder ignores when comparing)
SPLIT_KEYS = ("split.no", "split.count", "split.tensors.count")


@dataclass(frozen=True)
class CatalogTensor:
    """One rebuilt tensor catalog entry: identity from the carrier, storage from locators."""

    index: int  # position in the carrier's tensor directory
    name: str
    shape: tuple[int, ...]
    ggml_type: int
    n_bytes: int  # from type and shape
    part: int
    artifact: ArtifactEntry | None  # None: the part index names no payload artifact
    offset: int
    size: int
    alignment: int

    @property
    def layer_ordinal(self) -> int | None:
        return self.artifact.layer_index if self.artifact is not None else None

    @property
    def artifact_id(self) -> str | None:
        return self.artifact.artifact_id if self.artifact is not None else None


@dataclass
class TensorCatalog:
    tensors: list[CatalogTensor] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # invalid_metadata_carrier messages
    part_count: int | None = None

    @property
    def usable(self) -> bool:
        return not self.problems


def _uint(value: Any) -> int | None:
    return value if is_int(value) and value >= 0 else None


def carrier_by_layout(path: Any, header: GGUFHeader) -> bool:
    """The writer's carrier by where and what it is: `shared/metadata.gguf` with no data
    section (the file ends where its data would start). Its own marker key is not asked: a
    file cannot exempt itself from a check by claiming to be a carrier."""
    return (path == CARRIER_PATH and header.file_size is not None
            and header.file_size == header.data_offset)


def rebuild_catalog(carrier: GGUFHeader, payload: list[ArtifactEntry]) -> TensorCatalog:
    """Join the carrier's directory and locator arrays with the payload artifacts (by id)."""
    out = TensorCatalog()
    kv = carrier.kv
    if kv.get(METADATA_ONLY) is not True:
        out.problems.append(f"{METADATA_ONLY} must be the bool true, found "
                            f"{kv.get(METADATA_ONLY)!r}")
    schema = _uint(kv.get(LOCATOR_SCHEMA))
    if schema != SUPPORTED_LOCATOR_SCHEMA:
        out.problems.append(f"{LOCATOR_SCHEMA} must be {SUPPORTED_LOCATOR_SCHEMA}, found "
                            f"{kv.get(LOCATOR_SCHEMA)!r}")
    out.part_count = _uint(kv.get(PART_COUNT))
    if out.part_count is None:
        out.problems.append(f"{PART_COUNT} must be an unsigned integer, found "
                            f"{kv.get(PART_COUNT)!r}")
    elif out.part_count != len(payload):
        out.problems.append(f"{PART_COUNT} is {out.part_count} but the manifest has "
                            f"{len(payload)} payload artifact(s)")
    arrays: dict[str, list[int]] = {}
    n = len(carrier.tensors)
    for key in LOCATOR_ARRAYS:
        value = kv.get(key)
        if isinstance(value, ArraySummary):
            out.problems.append(f"{key} has {value.length} items, more than could be read")
        elif not isinstance(value, list) or not all(_uint(v) is not None for v in value):
            out.problems.append(f"{key} must be an array of unsigned integers")
        elif len(value) != n:
            out.problems.append(f"{key} has {len(value)} items for {n} tensors")
        else:
            arrays[key] = value
    if len(arrays) != len(LOCATOR_ARRAYS):
        return out
    for i, info in enumerate(carrier.tensors):
        part = arrays[TENSOR_PART][i]
        out.tensors.append(CatalogTensor(
            index=i, name=info.name, shape=info.shape, ggml_type=info.ggml_type,
            n_bytes=info.n_bytes, part=part,
            artifact=payload[part] if part < len(payload) else None,
            offset=arrays[TENSOR_OFFSET][i], size=arrays[TENSOR_SIZE][i],
            alignment=arrays[TENSOR_ALIGNMENT][i]))
    return out
