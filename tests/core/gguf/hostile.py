"""A hostile-GGUF corpus: one file per rule of llama.cpp's gguf_init (docs/gguf-rules.md) and
per rule meshcert adds, written byte by byte with `ggufbuild.GGUFFile` (no library writer
produces these).

Each `Hostile` case edits a valid GGUF (a small standalone file, or a real package fragment) and
may then patch the bytes. It names the code meshcert must report and what llama.cpp's own parser
(gguf_init_from_file, no_alloc) does with it: `llama_says` is a fragment of llama.cpp's error
log when it refuses the file, None when it accepts it (the rules where meshcert is stricter
than gguf_init; docs/gguf-rules.md says why for each).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from gguf import GGMLQuantizationType as Q

from tests.core.gguf.ggufbuild import KV, GGUFFile, RawTensor, V

Edit = Callable[[GGUFFile], None]
Patch = Callable[[GGUFFile, bytes], bytes]


@dataclass(frozen=True)
class Hostile:
    name: str
    code: str  # what meshcert reports
    llama_says: str | None  # llama.cpp's log fragment when it refuses the file; None: accepts
    edit: Edit
    patch: Patch | None = None

    def apply(self, base: GGUFFile) -> bytes:
        self.edit(base)
        data = base.to_bytes()
        return self.patch(base, data) if self.patch is not None else data


def _pad(n: int, alignment: int = 32) -> int:
    return -(-n // alignment) * alignment


def base_file() -> GGUFFile:
    """A small valid GGUF: three F32 tensors of 64+ bytes each, dense and aligned."""
    f = GGUFFile()
    f.kvs += [KV("general.architecture", V.STRING, "llama"), KV("general.name", V.STRING, "x"),
              KV("general.alignment", V.UINT32, 32)]
    f.tensors += [RawTensor("token_embd.weight", (8, 4), int(Q.F32), bytes(range(128))),
                  RawTensor("blk.0.attn_norm.weight", (24,), int(Q.F32), bytes(96)),
                  RawTensor("output.weight", (8, 4), int(Q.F32), bytes(128))]
    return f


def _raw_text(data: bytes) -> str:
    """Bytes that are not UTF-8, where the serializer takes a str (it writes bytes verbatim)."""
    return cast(str, data)


# --- edits --------------------------------------------------------------------------------------

def _gap(f: GGUFFile) -> None:
    f.tensors[1].offset = _pad(len(f.tensors[0].data)) + 64


def _reorder(f: GGUFFile) -> None:
    first, second = f.tensors[0], f.tensors[1]
    second.offset = 0
    first.offset = _pad(len(second.data))
    for t in f.tensors[2:]:
        t.offset = None


def _overlap(f: GGUFFile) -> None:
    f.tensors[0].offset = 0
    f.tensors[1].offset = 0  # the second tensor's bytes start where the first's do


def _kv(kv: KV) -> Edit:
    return lambda f: f.kvs.append(kv)


def _set_alignment(vtype: int, value: int) -> Edit:
    def edit(f: GGUFFile) -> None:
        f.kvs = [kv for kv in f.kvs if kv.key != "general.alignment"]
        f.kvs.append(KV("general.alignment", vtype, value))
    return edit


def _tensor0(**changes: object) -> Edit:
    def edit(f: GGUFFile) -> None:
        for name, value in changes.items():
            setattr(f.tensors[0], name, value)
    return edit


def _duplicate_tensor(f: GGUFFile) -> None:
    t = f.tensors[0]
    f.tensors.append(RawTensor(t.name, t.shape, t.ggml_type, t.data))


def _long_string_array(f: GGUFFile) -> None:
    words = [f"w{i}" for i in range(5000)]
    words[4321] = _raw_text(b"\xe2\x82")  # a 3-byte sequence cut short
    f.kvs.append(KV("hostile.words", V.ARRAY, words, sub_type=V.STRING))


def _version(n: int) -> Edit:
    def edit(f: GGUFFile) -> None:
        f.version = n
    return edit


def _big_endian(f: GGUFFile) -> None:
    f.order = ">"


def _odd_header(f: GGUFFile) -> None:
    """Make the header end off the alignment, so cutting the file there cuts the padding."""
    f.kvs.append(KV("hostile.pad", V.STRING, "x"))
    while len(f.header_bytes()) % f.alignment == 0:
        f.kv("hostile.pad").value += "x"


def _nothing(f: GGUFFile) -> None:
    return None


# --- byte patches -----------------------------------------------------------------------------

def _trailing(f: GGUFFile, data: bytes) -> bytes:
    return data + b"\xab" * 40


def _cut_last_tensor(f: GGUFFile, data: bytes) -> bytes:
    return data[:-33]  # the last tensor holds 64+ bytes and at most 31 bytes of padding follow


def _cut_to_header(f: GGUFFile, data: bytes) -> bytes:
    return data[:len(f.header_bytes())]


def _cut_header(f: GGUFFile, data: bytes) -> bytes:
    return data[:40]


def _magic(f: GGUFFile, data: bytes) -> bytes:
    return b"GGML" + data[4:]


U32, STR, ARR = struct.Struct("<I"), V.STRING, V.ARRAY

CORPUS: tuple[Hostile, ...] = (
    # llama.cpp's layout rule (gguf.cpp: offset == running padded sum, in tensor-info order)
    Hostile("gap_between_tensors", "gguf_tensor_data_not_dense", "has offset", _gap),
    Hostile("infos_out_of_data_order", "gguf_tensor_data_not_dense", "has offset", _reorder),
    Hostile("misaligned_tensor", "gguf_misaligned_tensor", "has offset",
            _tensor0(offset=8)),
    Hostile("overlapping_tensors", "gguf_tensor_overlap", "has offset", _overlap),
    Hostile("data_section_past_end", "gguf_truncated", "failed to seek to beginning of data",
            _odd_header, _cut_to_header),
    # keys and values
    Hostile("empty_key", "gguf_empty_key", "is empty", _kv(KV("", V.UINT32, 1))),
    Hostile("duplicate_key", "gguf_duplicate_key", "duplicate key",
            _kv(KV("general.name", STR, "again"))),
    Hostile("unknown_value_type", "gguf_invalid_header", "invalid GGUF type",
            _kv(KV("hostile.thing", 42, None, raw=bytes(8)))),
    Hostile("nested_array", "gguf_invalid_header", "invalid GGUF type",
            _kv(KV("hostile.nest", ARR, None, raw=U32.pack(ARR) + struct.pack("<Q", 0)))),
    Hostile("alignment_not_power_of_two", "gguf_invalid_header", "not a power of 2",
            _set_alignment(V.UINT32, 48)),
    Hostile("alignment_zero", "gguf_invalid_header", "not a power of 2",
            _set_alignment(V.UINT32, 0)),
    Hostile("alignment_not_u32", "gguf_invalid_header", "must be of type",
            _set_alignment(V.UINT64, 32)),
    # stricter than gguf_init (it accepts these; docs/gguf-rules.md)
    Hostile("key_not_utf8", "gguf_invalid_utf8", None,
            _kv(KV(_raw_text(b"hostile.\xff"), V.UINT32, 1))),
    Hostile("string_not_utf8", "gguf_invalid_utf8", None,
            _kv(KV("hostile.text", STR, _raw_text(b"caf\xc3(")))),
    Hostile("long_string_array_not_utf8", "gguf_invalid_utf8", None, _long_string_array),
    Hostile("tensor_name_not_utf8", "gguf_invalid_utf8", None,
            _tensor0(name=_raw_text(b"blk.\xc0\xaf.weight"))),
    Hostile("bool_byte_2", "gguf_invalid_bool", None,
            _kv(KV("hostile.flag", V.BOOL, None, raw=b"\x02"))),
    Hostile("bool_array_byte_5", "gguf_invalid_bool", None,
            _kv(KV("hostile.flags", ARR, None, raw=U32.pack(V.BOOL) + struct.pack("<Q", 3)
                   + b"\x00\x01\x05"))),
    Hostile("trailing_bytes", "gguf_trailing_bytes", None, _nothing, _trailing),
    Hostile("tensor_past_end_of_file", "gguf_tensor_out_of_bounds", None, _nothing,
            _cut_last_tensor),
    # tensor infos
    Hostile("unknown_ggml_type", "gguf_invalid_header", "invalid ggml type",
            _tensor0(ggml_type=250)),
    Hostile("removed_ggml_type_q4_2", "gguf_invalid_header", "not a multiple of block size",
            _tensor0(ggml_type=4)),
    Hostile("row_not_whole_blocks", "gguf_invalid_header", "not a multiple of block size",
            _tensor0(ggml_type=int(Q.Q4_0), shape=(33, 1))),
    Hostile("name_64_bytes", "gguf_invalid_header", "is too long", _tensor0(name="n" * 64)),
    Hostile("five_dimensions", "gguf_invalid_header", "invalid number of dimensions",
            _tensor0(shape=(1, 1, 1, 1, 1))),
    Hostile("negative_dimension", "gguf_invalid_header", "invalid number of elements",
            _tensor0(shape=(8, 1 << 63))),
    Hostile("element_count_overflow", "gguf_invalid_header", "may cause overflow",
            _tensor0(shape=(1 << 32, 1 << 32))),
    Hostile("byte_size_overflow", "gguf_invalid_header", "has a size in bytes",
            _tensor0(shape=(1 << 62,))),
    Hostile("duplicate_tensor", "gguf_duplicate_tensor", "duplicate tensor name",
            _duplicate_tensor),
    # the file as a whole
    Hostile("bad_magic", "gguf_bad_magic", "invalid magic", _nothing, _magic),
    Hostile("version_0", "gguf_unsupported_version", "bad GGUF version", _version(0)),
    Hostile("version_1", "gguf_unsupported_version", "no longer supported", _version(1)),
    Hostile("version_4", "gguf_unsupported_version", "only supports up to version", _version(4)),
    Hostile("big_endian", "gguf_big_endian", "mismatch between the host and model endianness",
            _big_endian),
    Hostile("truncated_header", "gguf_truncated", "exceeds remaining file size", _nothing,
            _cut_header),
)


def write_case(case: Hostile, folder: Path) -> Path:
    path = folder / f"{case.name}.gguf"
    path.write_bytes(case.apply(base_file()))
    return path
