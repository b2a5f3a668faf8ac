"""Real models (or generated ones) split into layer packages by the writer, as the tests
that judge packages need them: the package root, its manifest, the source and its header.
`write_carrier` writes a v2 carrier byte by byte with any locator or marker value, so a test
can break one carrier rule at a time (no writer would write those)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meshcert.certify.formats.v2_carrier import (
    LOCATOR_SCHEMA,
    METADATA_ONLY,
    PART_COUNT,
    SPLIT_KEYS,
    SUPPORTED_LOCATOR_SCHEMA,
    TENSOR_ALIGNMENT,
    TENSOR_OFFSET,
    TENSOR_PART,
    TENSOR_SIZE,
)
from meshcert.core.byte_source import LocalFileSource
from meshcert.core.gguf import wire
from meshcert.core.gguf.model import GGUFHeader, TensorInfo
from meshcert.core.gguf.reader import ReadLimits, read_header_and_bytes, read_header_with_limits
from meshcert.writer.plan import V2Layout
from meshcert.writer.write import write_file

Locator = tuple[int, int, int, int]  # (part, absolute offset, stored size, alignment)
FULL_READ = ReadLimits(array_items=1 << 24, total_items=1 << 27)


@dataclass
class SplitPackage:
    root: Path
    manifest: dict[str, Any]
    source_path: Path
    files: dict[str, Path] = field(default_factory=dict)  # package path -> file
    header: GGUFHeader | None = None  # the source's header


def read_source(path: Path) -> GGUFHeader:
    """A GGUF header with every array materialized."""
    header = read_header_with_limits(LocalFileSource(path), FULL_READ)
    assert isinstance(header, GGUFHeader), header
    return header


def _split(source: Path, out: Path, fmt: str, **options: Any) -> SplitPackage:
    result = write_file(source, out, fmt=fmt, **options)
    files = {a.path: result.root / a.path for a in result.plan.all_artifacts()}
    return SplitPackage(result.root, result.manifest, Path(source).resolve(), files,
                        result.plan.source.header)


def split_v1(source: Path, out: Path, *, model_id: str, repo: str | None = None,
             revision: str | None = None, readme: bool = True) -> SplitPackage:
    return _split(source, out, "v1", model_id=model_id, source_repo=repo,
                  source_revision=revision, readme=readme)


def split_v2(source: Path, out: Path, *, model_id: str, layout: V2Layout = "common",
             part_budget: int | None = None, repo: str | None = None,
             revision: str | None = None, readme: bool = True) -> SplitPackage:
    options: dict[str, Any] = {"v2_layout": layout}
    if part_budget is not None:
        options["max_artifact_bytes"] = part_budget
    return _split(source, out, "v2", model_id=model_id, source_repo=repo,
                  source_revision=revision, readme=readme, **options)


def write_carrier(path: Path, source: Path, directory: list[TensorInfo],
                  locators: list[Locator], *, part_count: int, metadata_only: Any = True,
                  locator_schema: int = SUPPORTED_LOCATOR_SCHEMA) -> None:
    """A carrier: the source's metadata entries (raw, split.* left out, general.alignment
    added when absent), the given marker values and locator rows, the given directory."""
    header, raw = read_header_and_bytes(LocalFileSource(source))
    assert isinstance(header, GGUFHeader), header
    entries = [raw[a:b] for key, (a, b) in header.kv_spans.items() if key not in SPLIT_KEYS]
    if "general.alignment" not in header.kv:
        entries.append(wire.kv("general.alignment", wire.UINT32, header.alignment))
    marker = wire.BOOL if isinstance(metadata_only, bool) else wire.UINT8
    entries += [
        wire.kv(METADATA_ONLY, marker, metadata_only),
        wire.kv(LOCATOR_SCHEMA, wire.UINT32, locator_schema),
        wire.kv(PART_COUNT, wire.UINT32, part_count),
        wire.kv_array(TENSOR_PART, wire.UINT32, [r[0] for r in locators]),
        wire.kv_array(TENSOR_OFFSET, wire.UINT64, [r[1] for r in locators]),
        wire.kv_array(TENSOR_SIZE, wire.UINT64, [r[2] for r in locators]),
        wire.kv_array(TENSOR_ALIGNMENT, wire.UINT32, [r[3] for r in locators]),
    ]
    infos, cursor = [], 0
    for t in directory:
        offset = wire.align(cursor, header.alignment)
        infos.append(wire.tensor_info(t.name, t.shape, t.ggml_type, offset))
        cursor = offset + t.n_bytes
    body = wire.preamble(len(infos), len(entries)) + b"".join(entries) + b"".join(infos)
    path.write_bytes(body + bytes(wire.align(len(body), header.alignment) - len(body)))


def with_extra_tensors(source: Path, out: Path, tensors: list[tuple[str, Any]]) -> Path:
    """A copy of `source` with `tensors` (f32/f16 numpy arrays) in front of its own, every
    metadata entry kept raw and every tensor byte kept: how llama.cpp's converter emits a
    generated tensor such as Llama 3's rope_freqs.weight, first in the file."""
    import numpy as np

    header, raw = read_header_and_bytes(LocalFileSource(source))
    assert isinstance(header, GGUFHeader), header
    types = {np.dtype(np.float32): 0, np.dtype(np.float16): 1}  # GGML_TYPE_F32 / F16
    new = [(name, np.ascontiguousarray(array)) for name, array in tensors]
    layout: list[tuple[str, tuple[int, ...], int, int]] = []  # name, shape, type, n_bytes
    layout += [(n, tuple(reversed(a.shape)), types[a.dtype], a.nbytes) for n, a in new]
    layout += [(t.name, t.shape, t.ggml_type, t.n_bytes) for t in header.tensors]
    infos, cursor = [], 0
    offsets = []
    for name, shape, ggml_type, n_bytes in layout:
        offset = wire.align(cursor, header.alignment)
        infos.append(wire.tensor_info(name, shape, ggml_type, offset))
        offsets.append(offset)
        cursor = offset + n_bytes
    entries = [raw[a:b] for a, b in header.kv_spans.values()]
    body = wire.preamble(len(infos), len(entries)) + b"".join(entries) + b"".join(infos)
    with open(source, "rb") as src, open(out, "wb") as dst:
        dst.write(body + bytes(wire.align(len(body), header.alignment) - len(body)))
        data_start = dst.tell()
        blobs = [a.tobytes() for _, a in new]
        for i, (_name, _shape, _type, n_bytes) in enumerate(layout):
            dst.write(bytes(data_start + offsets[i] - dst.tell()))
            if i < len(new):
                dst.write(blobs[i])
            else:
                t = header.tensors[i - len(new)]
                src.seek(header.data_offset + t.offset)
                dst.write(src.read(n_bytes))
    return out
