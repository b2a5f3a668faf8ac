"""Write GGUF files byte by byte (struct), and break real package fragments with them.

`GGUFFile` is a header and tensors as plain data; `to_bytes()` lays them out exactly as the
fields say, so a test can write what no library writer would: duplicate keys, overlapping or
misaligned tensors, unknown value types. `load()` reads a real fragment (with gguf.GGUFReader,
an independent implementation) so package breakers can edit one field and write it back.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gguf import GGML_QUANT_SIZES, GGUFReader, GGUFValueType

from meshcert.testing import PackageInfo
from tests.conftest import PackageFactory

V = GGUFValueType
SCALAR_FORMATS = {V.UINT8: "B", V.INT8: "b", V.UINT16: "H", V.INT16: "h", V.UINT32: "I",
                  V.INT32: "i", V.FLOAT32: "f", V.BOOL: "?", V.UINT64: "Q", V.INT64: "q",
                  V.FLOAT64: "d"}

# Every code the GGUF-level checks can emit: tests assert the exact subset a breakage yields.
GGUF_CODES = frozenset({
    "gguf_bad_magic", "gguf_unsupported_version", "gguf_truncated", "gguf_invalid_header",
    "gguf_duplicate_key", "gguf_duplicate_tensor", "gguf_tensor_out_of_bounds",
    "gguf_tensor_overlap", "gguf_misaligned_tensor", "tensor_count_mismatch",
    "tensor_bytes_mismatch", "tensor_in_wrong_layer", "tensor_duplicated_across_artifacts",
    "metadata_has_tensors", "architecture_mismatch", "layer_count_mismatch",
    "activation_width_mismatch", "unexpected_tensor_for_architecture", "missing_required_tensor",
    "native_mtp_layer_missing_tensors", "glm_dsa_contract_violation", "source_sha256_mismatch",
    "source_tensor_missing_from_package", "package_tensor_not_in_source",
    "source_tensor_data_mismatch", "source_not_package_source",
    # llama.cpp gguf_init rules (docs/gguf-rules.md)
    "gguf_tensor_data_not_dense", "gguf_trailing_bytes", "gguf_empty_key", "gguf_invalid_utf8",
    "gguf_invalid_bool", "gguf_big_endian",
})


@dataclass
class KV:
    key: str
    vtype: int
    value: Any
    sub_type: int | None = None  # element type when vtype is ARRAY
    raw: bytes | None = None  # written verbatim as the value (for types no writer can encode)


@dataclass
class RawTensor:
    name: str
    shape: tuple[int, ...]  # GGUF order
    ggml_type: int
    data: bytes
    offset: int | None = None  # None: laid out after the previous tensor, aligned


@dataclass
class GGUFFile:
    kvs: list[KV] = field(default_factory=list)
    tensors: list[RawTensor] = field(default_factory=list)
    version: int = 3
    alignment: int = 32  # layout only; add a general.alignment KV to declare another one
    order: str = "<"

    def kv(self, key: str) -> KV:
        return next(kv for kv in self.kvs if kv.key == key)

    def set(self, key: str, vtype: int, value: Any) -> None:
        """Replace the value of `key` in place, or append it."""
        for kv in self.kvs:
            if kv.key == key:
                kv.vtype, kv.value = vtype, value
                return
        self.kvs.append(KV(key, vtype, value))

    def tensor(self, name: str) -> RawTensor:
        return next(t for t in self.tensors if t.name == name)

    def header_bytes(self) -> bytes:
        """Magic through the last tensor info, unpadded (offsets as currently assigned)."""
        out = bytearray(b"GGUF")
        out += self._pack("I", self.version)
        out += self._pack("Q", len(self.tensors)) + self._pack("Q", len(self.kvs))
        for kv in self.kvs:
            out += self._string(kv.key) + self._pack("I", kv.vtype)
            out += kv.raw if kv.raw is not None else self._value(kv.vtype, kv.value, kv.sub_type)
        for t, offset in zip(self.tensors, self._offsets(), strict=True):
            out += self._string(t.name) + self._pack("I", len(t.shape))
            for dim in t.shape:
                out += self._pack("Q", dim)
            out += self._pack("I", t.ggml_type) + self._pack("Q", offset)
        return bytes(out)

    def to_bytes(self) -> bytes:
        header = self.header_bytes()
        data_offset = -(-len(header) // self.alignment) * self.alignment
        data = bytearray()
        for t, offset in zip(self.tensors, self._offsets(), strict=True):
            end = offset + len(t.data)
            if len(data) < end:
                data += bytes(end - len(data))
            data[offset:end] = t.data
        pad = -len(data) % self.alignment
        return header + bytes(data_offset - len(header)) + bytes(data) + bytes(pad)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.to_bytes())
        return path

    def _offsets(self) -> list[int]:
        offsets, cursor = [], 0
        for t in self.tensors:
            offset = t.offset if t.offset is not None else -(-cursor // self.alignment) * \
                self.alignment
            offsets.append(offset)
            cursor = max(cursor, offset + len(t.data))
        return offsets

    def _pack(self, fmt: str, value: Any) -> bytes:
        return struct.pack(self.order + fmt, value)

    def _string(self, text: str | bytes) -> bytes:
        raw = text.encode() if isinstance(text, str) else text
        return self._pack("Q", len(raw)) + raw

    def _value(self, vtype: int, value: Any, sub_type: int | None) -> bytes:
        if vtype in SCALAR_FORMATS:
            return self._pack(SCALAR_FORMATS[V(vtype)], value)
        if vtype == V.STRING:
            return self._string(value)
        assert vtype == V.ARRAY and sub_type is not None, f"cannot encode value type {vtype}"
        items = b"".join(self._value(sub_type, item, None) for item in value)
        return self._pack("I", sub_type) + self._pack("Q", len(value)) + items


def load(path: Path) -> GGUFFile:
    """A real fragment as a GGUFFile (read with gguf.GGUFReader, not with meshcert's reader)."""
    reader = GGUFReader(path)
    kvs = []
    for name, fld in reader.fields.items():
        if name.startswith("GGUF."):
            continue
        sub = int(fld.types[-1]) if fld.types[0] == V.ARRAY else None
        kvs.append(KV(name, int(fld.types[0]), fld.contents(), sub))
    tensors = [RawTensor(t.name, tuple(int(d) for d in t.shape), int(t.tensor_type),
                         bytes(reader.data[t.data_offset:t.data_offset + t.n_bytes]))
               for t in reader.tensors]
    return GGUFFile(kvs, tensors, alignment=int(reader.alignment))


def nbytes(shape: tuple[int, ...], ggml_type: int) -> int:
    block, size = GGML_QUANT_SIZES[ggml_type]  # type: ignore[index]
    n = 1
    for d in shape:
        n *= d
    return n // block * size


# --- package breakers -------------------------------------------------------------------------

def manifest_entry(manifest: dict[str, Any], rel: str) -> dict[str, Any]:
    entries = [*manifest["shared"].values(), *manifest["layers"], *manifest.get("projectors", [])]
    return next(e for e in entries if e["path"] == rel)


def sync_manifest(info: PackageInfo, rel: str, fragment: GGUFFile | None = None) -> None:
    """Make the manifest entry describe the file as it now is: size and sha256, and the tensor
    count and bytes of `fragment` when given (so only the breakage under test is reported)."""
    raw = (info.root / rel).read_bytes()

    def edit(manifest: dict[str, Any]) -> None:
        entry = manifest_entry(manifest, rel)
        entry["artifact_bytes"] = len(raw)
        entry["sha256"] = hashlib.sha256(raw).hexdigest()
        if fragment is not None:
            entry["tensor_count"] = len(fragment.tensors)
            entry["tensor_bytes"] = sum(len(t.data) for t in fragment.tensors)

    PackageFactory.edit_manifest(info, edit)


def rewrite(info: PackageInfo, rel: str, edit: Callable[[GGUFFile], None], *,
            sync: bool = True) -> GGUFFile:
    """Load a fragment, edit it, write it back and (by default) re-sync its manifest entry."""
    fragment = load(info.root / rel)
    edit(fragment)
    fragment.write(info.root / rel)
    if sync:
        sync_manifest(info, rel, fragment)
    return fragment


def write_raw(info: PackageInfo, rel: str, data: bytes) -> None:
    """Replace a fragment with arbitrary bytes and sync its size/sha256 (tensor counts kept)."""
    (info.root / rel).write_bytes(data)
    sync_manifest(info, rel)


def move_tensor(info: PackageInfo, name: str, src: str, dst: str) -> None:
    taken: list[RawTensor] = []

    def take(f: GGUFFile) -> None:
        taken.append(f.tensor(name))
        f.tensors.remove(taken[0])

    rewrite(info, src, take)
    rewrite(info, dst, lambda f: f.tensors.append(RawTensor(name, taken[0].shape,
                                                            taken[0].ggml_type, taken[0].data)))


def copy_tensor(info: PackageInfo, name: str, src: str, dst: str) -> None:
    t = load(info.root / src).tensor(name)
    rewrite(info, dst, lambda f: f.tensors.append(RawTensor(name, t.shape, t.ggml_type, t.data)))


def drop_tensors(info: PackageInfo, rel: str, keep: Callable[[str], bool]) -> None:
    def edit(f: GGUFFile) -> None:
        f.tensors = [t for t in f.tensors if keep(t.name)]

    rewrite(info, rel, edit)


def layer_rel(index: int) -> str:
    return f"layers/layer-{index:03d}.gguf"  # the v1 writer names layers with 3 digits
