"""Read a GGUF header (never tensor data) through a ByteSource, safely and fast.

The header is: magic ``GGUF``, version (2 or 3), tensor count and KV count (u64 each), the KV
pairs, the tensor infos (name, dims, ggml type, data offset), then padding up to
``general.alignment`` (default 32) where the tensor data section starts.

Why not ``gguf.GGUFReader``
---------------------------
GGUFReader memory-maps the whole file and builds a numpy view (two for a string: its length and
its bytes) plus a Python list entry for every element of every array. Layer-package fragments
repeat the tokenizer, so a 6 MB fragment with a 152k-token vocabulary and 150k merges becomes
about a million small numpy objects and takes 20-30 s to open; a 94-layer package would take
half an hour. It also needs a local file (it cannot read HTTP ranges) and raises on duplicate
keys, so it cannot report them. This reader instead:

- reads only the header, through ``ByteSource.read`` in blocks that start at 64 KiB and double
  only while the header needs more, so a remote fragment costs a handful of range requests;
- decodes a small array with one ``struct.unpack_from`` call, and turns an array longer than
  ``ReadLimits.array_items`` into an ``ArraySummary`` after a tight length-only scan (strings) or
  a single jump (numbers), so no per-element objects are built for tokenizer arrays;
- bounds memory and time on hostile input: every length and count is checked against the bytes
  that can possibly remain before anything is allocated or looped over, the header may not grow
  past ``ReadLimits.max_header_bytes``, and the number of materialized array elements has a
  budget. Malformed input gives a ``HeaderProblem`` (a finding code, a message, an offset), never
  an exception.

Duplicate keys and duplicate tensor names are recorded on the header (the first value wins),
not treated as read errors: they are findings, and the rest of the header is still useful. So
are the things llama.cpp's gguf_init refuses or GGUF forbids that do not stop a parse
(docs/gguf-rules.md): empty keys, text that is not UTF-8 (keys, strings, tensor names, and the
strings of skipped arrays, validated in one vectorized pass), bool bytes other than 0 and 1, and
a big-endian byte order.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import struct
import threading
from dataclasses import dataclass
from typing import Any

from meshcert.core.byte_source import ByteSource, LocalFileSource
from meshcert.core.errors import MeshcertError
from meshcert.core.gguf.constants import GGML_QUANT_SIZES
from meshcert.core.gguf.model import ArraySummary, GGUFHeader, HeaderProblem, TensorInfo

MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
MAX_DIMS = 4  # GGML_MAX_DIMS: llama.cpp refuses tensors with more dimensions
ALIGNMENT_KEY = "general.alignment"

# GGUF metadata value types (gguf.GGUFValueType), as plain data.
STRING, ARRAY = 8, 9
UINT32 = 4
BOOL = 7
_MAX_RECORDED = 64  # problems of one kind kept per header (the rest are counted, not listed)
_UTF8_CHUNK = 1 << 16  # skipped strings validated per pass (bounds the offsets kept)
_ZERO_PREFIX = bytes(8)  # a string's 8-byte length prefix, blanked before the UTF-8 check
SCALAR_FORMATS: dict[int, tuple[str, int]] = {
    0: ("B", 1), 1: ("b", 1), 2: ("H", 2), 3: ("h", 2), 4: ("I", 4), 5: ("i", 4),
    6: ("f", 4), 7: ("?", 1), 10: ("Q", 8), 11: ("q", 8), 12: ("d", 8),
}
_MIN_VALUE_BYTES = 1  # the smallest value (u8, i8, bool)
_MIN_KV_BYTES = 8 + 4 + _MIN_VALUE_BYTES  # key length, value type, value
_MIN_TENSOR_BYTES = 8 + 4 + 4 + 8  # name length, n_dims (0 dims), ggml type, offset


@dataclass(frozen=True)
class ReadLimits:
    """Bounds that keep a hostile header from costing unbounded memory, time or requests."""

    initial_block: int = 64 * 1024  # first read; later reads double the buffered prefix
    max_header_bytes: int = 256 * 1024 * 1024
    max_kv_count: int = 1 << 16  # real models carry ~50 keys
    max_tensor_count: int = 1 << 17  # real models carry a few thousand tensors at most
    array_items: int = 4096  # longer arrays become ArraySummary
    # numeric arrays under these prefixes are always materialized (within total_items): the
    # package-v2 carrier's per-tensor locators have one element per tensor of the model
    always_materialize: tuple[str, ...] = ("skippy.package.",)
    total_items: int = 1 << 20  # materialized array elements over the whole header


DEFAULT_LIMITS = ReadLimits()


class _Stop(MeshcertError):
    """Internal: abandon the parse with this HeaderProblem."""

    def __init__(self, code: str, message: str, offset: int | None) -> None:
        super().__init__(message)
        self.problem = HeaderProblem(code, message, offset)


def read_header(source: ByteSource) -> GGUFHeader | HeaderProblem:
    """Read the GGUF header from `source` with the default limits."""
    return read_header_with_limits(source, DEFAULT_LIMITS)


def read_header_file(path: str | os.PathLike[str]) -> GGUFHeader | HeaderProblem:
    """Read the GGUF header of a local file.

    A file that cannot be opened is not a header property: it yields a ``check_not_run``
    error, so the result is reported as incomplete rather than as a corrupt fragment.
    """
    try:
        source = LocalFileSource(path)
    except OSError as exc:
        return HeaderProblem("check_not_run", f"cannot open {os.fspath(path)}: "
                           f"{exc.strerror or exc}", None)
    return read_header(source)


def read_header_with_limits(source: ByteSource, limits: ReadLimits) -> GGUFHeader | HeaderProblem:
    """Read the header under explicit limits (tests shrink them; callers use read_header)."""
    return read_header_and_bytes(source, limits)[0]


def read_header_and_bytes(source: ByteSource, limits: ReadLimits = DEFAULT_LIMITS
                          ) -> tuple[GGUFHeader | HeaderProblem, bytes]:
    """The header and every byte the read fetched (the file's first bytes, at least up to
    ``header_end``), for a writer that copies metadata entries verbatim
    (``GGUFHeader.kv_spans`` locates each one) and would not fetch those bytes twice; no bytes
    when the header could not be read."""
    parser = _Parser(source, limits)
    try:
        header = parser.parse()
    except _Stop as stop:
        return stop.problem, b""
    return header, parser.raw()


def tensor_nbytes(shape: tuple[int, ...], ggml_type: int) -> int:
    """Bytes of a tensor's data from its type and shape (0 when the type is unknown)."""
    sizes = GGML_QUANT_SIZES.get(ggml_type)
    if sizes is None:
        return 0
    block, type_size = sizes
    n_elements = 1
    for dim in shape:
        n_elements *= dim
    return n_elements * type_size // block


def _digest(buf: bytearray, start: int, end: int) -> str:
    """SHA-256 of buf[start:end] (a summarized array's encoded items), without a copy."""
    with memoryview(buf) as view:
        return hashlib.sha256(view[start:end]).hexdigest()


@dataclass(frozen=True)
class _Skipped:
    nbytes: int
    digest: str
    invalid_utf8: list[str]


class _SkippedArrays:
    """A small, thread-safe memory of string arrays walked in this process (see
    `_Parser._seen_before`): per (key, item count, byte order), the last few byte runs."""

    def __init__(self, per_key: int = 4, keys: int = 64) -> None:
        self._lock = threading.Lock()
        self._items: dict[tuple[str, int, str], list[_Skipped]] = {}
        self._per_key, self._keys = per_key, keys

    def candidates(self, key: tuple[str, int, str]) -> list[_Skipped]:
        with self._lock:
            return list(self._items.get(key, ()))

    def remember(self, key: tuple[str, int, str], item: _Skipped) -> None:
        with self._lock:
            runs = [r for r in self._items.pop(key, []) if r.digest != item.digest]
            self._items[key] = [item, *runs][:self._per_key]
            while len(self._items) > self._keys:
                self._items.pop(next(iter(self._items)))


_SKIPPED = _SkippedArrays()


class _Parser:
    """One pass over a header held in a growing prefix buffer of the source."""

    def __init__(self, source: ByteSource, limits: ReadLimits) -> None:
        self._source = source
        self._limits = limits
        self._size = source.size  # learnt on a short read when the source does not know it
        self._buf = bytearray()
        self._pos = 0
        self._array_types: dict[str, int] = {}
        self._order = "<"
        self._items_left = limits.total_items
        self._empty_keys: list[int] = []
        self._invalid_utf8: list[str] = []
        self._invalid_bools: list[str] = []

    # --- buffer ---------------------------------------------------------------------------
    def _reachable(self, end: int, what: str, at: int) -> None:
        """Fail unless a header spanning bytes [0, end) could exist in this file."""
        if self._size is not None and end > self._size:
            raise _Stop("gguf_truncated", f"{what} at offset {at} needs {end} bytes but the file "
                        f"has {self._size}", at)
        if end > self._limits.max_header_bytes:
            raise _Stop("gguf_invalid_header", f"{what} at offset {at} would make the header "
                        f"larger than the {self._limits.max_header_bytes} byte limit", at)

    def _need(self, end: int, what: str, at: int) -> None:
        """Make the buffered prefix cover [0, end), reading a doubled block when it does not."""
        if end <= len(self._buf):
            return
        self._reachable(end, what, at)
        have = len(self._buf)
        want = max(end, 2 * have, self._limits.initial_block)
        want = min(want, self._limits.max_header_bytes)
        if self._size is not None:
            want = min(want, self._size)
        try:
            data = self._source.read(have, want - have)
        except OSError as exc:
            raise _Stop("check_not_run", f"reading bytes {have}..{want} failed: "
                        f"{exc.strerror or exc}", have) from None
        self._buf += data[:want - have]
        if len(data) < want - have:  # end of file: now the size is known
            self._size = len(self._buf)
        if end > len(self._buf):
            raise _Stop("gguf_truncated", f"{what} at offset {at} needs {end} bytes but the file "
                        f"ends at {len(self._buf)}", at)

    def raw(self) -> bytes:
        """Every byte read so far: the file's prefix [0, len)."""
        return bytes(self._buf)

    # --- primitives -----------------------------------------------------------------------
    def _unpack(self, fmt: str, size: int, what: str) -> Any:
        at = self._pos
        self._need(at + size, what, at)
        self._pos = at + size
        return struct.unpack_from(self._order + fmt, self._buf, at)[0]

    def _u32(self, what: str) -> int:
        return int(self._unpack("I", 4, what))

    def _u64(self, what: str) -> int:
        return int(self._unpack("Q", 8, what))

    def _string(self, what: str) -> str:
        at = self._pos
        length = self._u64(f"length of {what}")
        start = self._pos
        self._need(start + length, what, at)
        self._pos = start + length
        raw = self._buf[start:start + length]
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self._note(self._invalid_utf8, what)
            return raw.decode("utf-8", errors="replace")

    @staticmethod
    def _note(problems: list[str], where: str) -> None:
        if len(problems) < _MAX_RECORDED:
            problems.append(where)

    # --- header ---------------------------------------------------------------------------
    def parse(self) -> GGUFHeader:
        version = self._preamble()
        tensor_count = self._u64("tensor count")
        kv_count = self._u64("metadata KV count")
        self._reachable(self._pos + kv_count * _MIN_KV_BYTES + tensor_count * _MIN_TENSOR_BYTES,
                        f"{kv_count} metadata entries and {tensor_count} tensor infos", 8)
        if kv_count > self._limits.max_kv_count:
            raise _Stop("gguf_invalid_header", f"metadata KV count {kv_count} is over the limit "
                        f"of {self._limits.max_kv_count}", 16)
        if tensor_count > self._limits.max_tensor_count:
            raise _Stop("gguf_invalid_header", f"tensor count {tensor_count} is over the limit "
                        f"of {self._limits.max_tensor_count}", 8)
        kv, kv_types, duplicate_keys, kv_spans = self._kv_pairs(kv_count)
        alignment = self._alignment(kv, kv_types)
        tensors, duplicate_tensors = self._tensor_infos(tensor_count)
        data_offset = -(-self._pos // alignment) * alignment
        return GGUFHeader(version=version, kv=kv, tensors=tensors, alignment=alignment,
                          data_offset=data_offset, file_size=self._size,
                          duplicate_keys=duplicate_keys, duplicate_tensors=duplicate_tensors,
                          kv_types=kv_types, array_types=self._array_types,
                          byte_order=self._order, header_end=self._pos,
                          empty_keys=self._empty_keys, invalid_utf8=self._invalid_utf8,
                          invalid_bools=self._invalid_bools, kv_spans=kv_spans)

    def _preamble(self) -> int:
        try:
            self._need(len(MAGIC), "magic", 0)  # the first read fetches a whole initial block
        except _Stop as stop:
            if stop.problem.code != "gguf_truncated":
                raise
            if self._size:  # shorter than the magic: read what there is, to say what it is
                self._need(self._size, "magic", 0)
        magic = bytes(self._buf[:4])
        if magic != MAGIC:
            if len(magic) < 4 and MAGIC.startswith(magic):
                raise _Stop("gguf_truncated", f"the file is {len(magic)} bytes long, too short "
                            "for a GGUF header", 0)
            raise _Stop("gguf_bad_magic", f"the file starts with {magic!r}, not b'GGUF'", 0)
        self._pos = 4
        raw = self._unpack("I", 4, "version")
        if raw not in SUPPORTED_VERSIONS:
            swapped = struct.unpack("<I", struct.pack(">I", raw))[0]
            if swapped not in SUPPORTED_VERSIONS:
                raise _Stop("gguf_unsupported_version", f"GGUF version {raw} is not supported "
                            "(only versions 2 and 3)", 4)
            self._order, raw = ">", swapped  # a big-endian file
        return int(raw)

    def _kv_pairs(self, count: int) -> tuple[dict[str, Any], dict[str, int], list[str],
                                             dict[str, tuple[int, int]]]:
        kv: dict[str, Any] = {}
        kv_types: dict[str, int] = {}
        spans: dict[str, tuple[int, int]] = {}
        duplicates: list[str] = []
        for index in range(count):
            at = self._pos
            key = self._string(f"key of metadata entry {index}")
            if not key:
                self._note_index(index)
            value_type = self._u32(f"value type of {key!r}")
            value = self._value(value_type, key, at)
            if key in kv:
                duplicates.append(key)
            else:
                kv[key] = value
                kv_types[key] = value_type
                spans[key] = (at, self._pos)
        return kv, kv_types, duplicates, spans

    def _note_index(self, index: int) -> None:
        if len(self._empty_keys) < _MAX_RECORDED:
            self._empty_keys.append(index)

    def _check_bools(self, start: int, end: int, key: str) -> None:
        """GGUF bools are one byte, 0 or 1; llama.cpp reads any other byte as true."""
        if bytes(self._buf[start:end]).strip(b"\x00\x01"):
            self._note(self._invalid_bools, key)

    def _value(self, value_type: int, key: str, at: int) -> Any:
        if value_type == BOOL:
            start = self._pos
            raw = self._unpack("B", 1, f"value of {key!r}")
            self._check_bools(start, start + 1, key)
            return bool(raw)
        scalar = SCALAR_FORMATS.get(value_type)
        if scalar is not None:
            return self._unpack(scalar[0], scalar[1], f"value of {key!r}")
        if value_type == STRING:
            return self._string(f"value of {key!r}")
        if value_type == ARRAY:
            return self._array(key, at)
        raise _Stop("gguf_invalid_header", f"metadata key {key!r} has unknown value type "
                    f"{value_type}", at)

    def _array(self, key: str, at: int) -> list[Any] | ArraySummary:
        element_type = self._u32(f"element type of {key!r}")
        self._array_types.setdefault(key, element_type)
        length = self._u64(f"length of array {key!r}")
        scalar = SCALAR_FORMATS.get(element_type)
        if scalar is None and element_type != STRING:
            kind = "nested arrays" if element_type == ARRAY else f"element type {element_type}"
            raise _Stop("gguf_invalid_header", f"array {key!r} has {kind}, which GGUF readers "
                        "do not support", at)
        item_bytes = scalar[1] if scalar is not None else 8
        self._reachable(self._pos + length * item_bytes, f"array {key!r} of {length} items", at)
        wanted = length <= self._limits.array_items or (
            scalar is not None and key.startswith(self._limits.always_materialize))
        keep = wanted and length <= self._items_left
        if keep:
            self._items_left -= length
        if scalar is not None:
            start = self._pos
            self._need(start + length * item_bytes, f"array {key!r}", at)
            self._pos = start + length * item_bytes
            if element_type == BOOL:
                self._check_bools(start, self._pos, key)
            if not keep:
                return ArraySummary(element_type, length, _digest(self._buf, start, self._pos))
            fmt = f"{self._order}{length}{scalar[0]}"
            return list(struct.unpack_from(fmt, self._buf, start))
        if keep:
            return [self._string(f"item {i} of array {key!r}") for i in range(length)]
        start = self._pos
        seen = self._seen_before(key, length, start)
        if seen is not None:
            return ArraySummary(element_type, length, seen)
        noted = len(self._invalid_utf8)
        self._skip_strings(length, key, at)
        digest = _digest(self._buf, start, self._pos)
        _SKIPPED.remember((key, length, self._order),
                          _Skipped(self._pos - start, digest, self._invalid_utf8[noted:]))
        return ArraySummary(element_type, length, digest)

    def _seen_before(self, key: str, length: int, start: int) -> str | None:
        """The digest of a string array whose exact bytes this process already walked.

        Layer-package fragments repeat the tokenizer: 94 fragments, 94 copies of the same
        152k-token vocabulary. Walking the length prefixes is the reader's hot loop, so when
        the bytes at `start` hash to those of an array already walked under the same key and
        item count, the walk (and its UTF-8 check) is known without doing it: identical bytes
        give identical lengths, end and validity. The candidate's bytes are read only when
        they fit in the file and under the header limit, so a miss costs one hash."""
        for found in _SKIPPED.candidates((key, length, self._order)):
            end = start + found.nbytes
            if end > self._limits.max_header_bytes or (self._size is not None
                                                       and end > self._size):
                continue
            try:
                self._need(end, f"array {key!r}", start)
            except _Stop:
                continue
            if _digest(self._buf, start, end) == found.digest:
                self._pos = end
                self._invalid_utf8.extend(found.invalid_utf8)
                return found.digest
        return None

    def _skip_strings(self, count: int, key: str, at: int) -> None:
        """Walk `count` length-prefixed strings without decoding them (the tokenizer hot loop),
        validating them a chunk of _UTF8_CHUNK at a time (bounded memory)."""
        unpack = struct.Struct(self._order + "Q").unpack_from
        buf = self._buf
        pos = self._pos
        have = len(buf)
        valid = True
        for first in range(0, max(count, 1), _UTF8_CHUNK):  # first: index of the chunk's item 0
            starts: list[int] = []
            wide: list[int] = []  # starts of the strings whose length prefix is not all ASCII
            append = starts.append
            for _ in range(min(_UTF8_CHUNK, count - first)):
                if pos + 8 > have:
                    self._need(pos + 8, f"a string in array {key!r}", at)
                    buf, have = self._buf, len(self._buf)
                pos += 8
                append(pos)
                length = unpack(buf, pos - 8)[0]
                if length > 0x7F:
                    wide.append(pos)
                pos += length
            last = first + _UTF8_CHUNK >= count
            self._need(pos, f"the last string in array {key!r}" if last
                       else f"a string in array {key!r}", at)
            buf, have = self._buf, len(self._buf)
            valid = valid and self._check_utf8_items(starts, wide, pos, key, first)
        self._pos = pos

    def _check_utf8_items(self, starts: list[int], wide: list[int], end: int, key: str,
                          first: int) -> bool:
        """Validate skipped strings at once (False, and noted, when one is not UTF-8): their
        bytes, length prefixes included, decode exactly when every string does, as long as
        every prefix byte is ASCII (a sequence cut at one string's end is then never completed
        by the next prefix, and a prefix never starts or continues a sequence). A prefix is
        all ASCII when its length is below 0x80, as nearly every token's is; the prefixes of
        `wide` (longer) strings are zeroed in a copy first. One decode in C, no numpy (whose
        import costs more start-up, 60-130 ms, than the walk). Only on failure is the
        offending item looked for."""
        if not starts:
            return True
        base = starts[0] - 8
        try:
            if wide:
                region = self._buf[base:end]  # a copy (bytearray slice)
                for start in wide:
                    region[start - 8 - base:start - base] = _ZERO_PREFIX
                region.decode("utf-8")
            else:
                with memoryview(self._buf) as view:  # released before the buffer grows
                    str(view[base:end], "utf-8")
            return True
        except UnicodeDecodeError as exc:
            bad = base + exc.start
        index = first + max(bisect.bisect_right(starts, bad) - 1, 0)
        self._note(self._invalid_utf8, f"item {index} of array {key!r}")
        return False

    def _alignment(self, kv: dict[str, Any], kv_types: dict[str, int]) -> int:
        if ALIGNMENT_KEY not in kv:
            return DEFAULT_ALIGNMENT
        value = kv[ALIGNMENT_KEY]
        if kv_types[ALIGNMENT_KEY] != UINT32:
            raise _Stop("gguf_invalid_header", f"{ALIGNMENT_KEY} must be a uint32, found value "
                        f"type {kv_types[ALIGNMENT_KEY]}", None)
        if value == 0 or value & (value - 1):
            raise _Stop("gguf_invalid_header", f"{ALIGNMENT_KEY} = {value} is not a power of two",
                        None)
        return int(value)

    def _tensor_infos(self, count: int) -> tuple[list[TensorInfo], list[str]]:
        tensors: list[TensorInfo] = []
        seen: set[str] = set()
        duplicates: list[str] = []
        for index in range(count):
            at = self._pos
            name = self._string(f"name of tensor {index}")
            n_dims = self._u32(f"dimension count of tensor {name!r}")
            if n_dims > MAX_DIMS:
                raise _Stop("gguf_invalid_header", f"tensor {name!r} has {n_dims} dimensions "
                            f"(at most {MAX_DIMS})", at)
            shape = tuple(self._u64(f"dimension {d} of tensor {name!r}") for d in range(n_dims))
            ggml_type = self._u32(f"type of tensor {name!r}")
            offset = self._u64(f"data offset of tensor {name!r}")
            if name in seen:
                duplicates.append(name)
            seen.add(name)
            tensors.append(TensorInfo(name=name, shape=shape, ggml_type=ggml_type, offset=offset,
                                      n_bytes=tensor_nbytes(shape, ggml_type)))
        return tensors, duplicates
