"""GGUF wire format, written: KV entries, tensor infos, the preamble and alignment (pure).

Only what a package writer adds needs encoding (general.alignment, skippy.* keys, locator
arrays, tensor infos); the source's own metadata entries are copied as their raw bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

MAGIC = b"GGUF"
VERSION = 3
DEFAULT_ALIGNMENT = 32
PREAMBLE_BYTES = 24  # magic, version, tensor count, KV count

# GGUF value types
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = range(10)
UINT64, INT64, FLOAT64 = 10, 11, 12
_SCALAR = {UINT8: "B", INT8: "b", UINT16: "H", INT16: "h", UINT32: "I", INT32: "i",
           FLOAT32: "f", BOOL: "?", UINT64: "Q", INT64: "q", FLOAT64: "d"}


def align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def string(text: str | bytes) -> bytes:
    raw = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack("<Q", len(raw)) + raw


def scalar(vtype: int, value: int | float | bool) -> bytes:
    return struct.pack("<" + _SCALAR[vtype], value)


def kv(key: str, vtype: int, value: int | float | bool | str) -> bytes:
    """One scalar or string metadata entry."""
    body = string(value) if isinstance(value, str) else scalar(vtype, value)
    return string(key) + struct.pack("<I", vtype) + body


def kv_array(key: str, item_type: int, values: Sequence[int]) -> bytes:
    """One array entry of scalars (the carrier's locator arrays)."""
    items = struct.pack(f"<{len(values)}{_SCALAR[item_type]}", *values)
    return string(key) + struct.pack("<IIQ", ARRAY, item_type, len(values)) + items


def tensor_info(name: str, shape: Sequence[int], ggml_type: int, offset: int) -> bytes:
    return (string(name) + struct.pack("<I", len(shape))
            + struct.pack(f"<{len(shape)}Q", *shape) + struct.pack("<IQ", ggml_type, offset))


def preamble(n_tensors: int, n_kv: int) -> bytes:
    return MAGIC + struct.pack("<IQQ", VERSION, n_tensors, n_kv)
