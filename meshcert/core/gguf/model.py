"""What a GGUF header read yields (data only; the reader lives in `meshcert.core.gguf.reader`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # GGUF order (ne[0] first)
    ggml_type: int
    offset: int  # relative to the start of the data section
    n_bytes: int  # computed from type and shape (0 when the type is unknown)


@dataclass(frozen=True)
class ArraySummary:
    """A large array the reader skipped instead of materializing (e.g. a 152k vocab)."""

    element_type: int
    length: int
    # SHA-256 of the array's encoded items, so copies can be compared without the items; not
    # part of equality (a summary still equals one built from element type and length alone)
    digest: str | None = field(default=None, compare=False)


@dataclass
class GGUFHeader:
    version: int
    kv: dict[str, Any]  # scalars as Python values; arrays as lists or ArraySummary
    tensors: list[TensorInfo]
    alignment: int
    data_offset: int  # absolute offset of the tensor data section
    file_size: int | None
    duplicate_keys: list[str] = field(default_factory=list)
    duplicate_tensors: list[str] = field(default_factory=list)
    kv_types: dict[str, int] = field(default_factory=dict)  # GGUF value type of each key
    array_types: dict[str, int] = field(default_factory=dict)  # element type of array keys
    # What llama.cpp's gguf_init refuses (or GGUF forbids) although the parse can go on:
    byte_order: str = "<"  # ">" for a big-endian file (llama.cpp refuses a byte-swapped one)
    header_end: int = 0  # end of the last tensor info, before padding to the data section
    empty_keys: list[int] = field(default_factory=list)  # indexes of metadata entries
    invalid_utf8: list[str] = field(default_factory=list)  # where: "key of entry 3", ...
    invalid_bools: list[str] = field(default_factory=list)  # keys holding a byte not 0 or 1
    # where each key's entry (key, value type, value) lies in the file: [start, end) offsets
    # (the first entry of a duplicated key), so a writer can copy entries as raw bytes
    kv_spans: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def architecture(self) -> str | None:
        value = self.kv.get("general.architecture")
        return value if isinstance(value, str) else None


@dataclass(frozen=True)
class HeaderProblem:
    """The header could not be read; `code` is a finding code (gguf_bad_magic, ...)."""

    code: str
    message: str
    offset: int | None = None
