"""The source model: one GGUF, a `-00001-of-0000N` split set, or the same on the Hub.

Headers are read once, with their raw bytes (`meshcert.core.gguf.reader.read_header_and_bytes`), so
metadata entries can be copied verbatim; tensor bytes are read later, through a `ByteReader`
(positional reads into a caller's buffer). Everything a planner relies on is checked here, and a
source that fails is a `Refused` before anything is written: unreadable headers, a missing or
mismatched sibling shard, duplicate keys or tensors, tensors of unknown type, outside their
file or overlapping, no architecture or block count.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from meshcert.certify.formats.v2_carrier import SPLIT_KEYS
from meshcert.core.byte_source import ByteSource
from meshcert.core.errors import Refused
from meshcert.core.gguf.model import GGUFHeader, TensorInfo
from meshcert.core.gguf.reader import read_header_and_bytes

SPLIT_NAME = re.compile(r"^(?P<stem>.+)-(?P<index>\d{5})-of-(?P<count>\d{5})\.gguf$")


class ByteReader(Protocol):
    """Positional reads of one file into a caller's buffer (no allocation per read)."""

    @property
    def size(self) -> int: ...

    def readinto(self, offset: int, buffer: memoryview) -> int:
        """Fill `buffer` from `offset`; fewer bytes only at end of file."""

    def close(self) -> None: ...


class LocalReader:
    """A local file read with preadv into the caller's buffer."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_RDONLY)
        self._size = os.fstat(self._fd).st_size
        self.bytes_read = 0

    @property
    def size(self) -> int:
        return self._size

    def readinto(self, offset: int, buffer: memoryview) -> int:
        done = 0
        while done < len(buffer):
            n = os.preadv(self._fd, [buffer[done:]], offset + done)
            if n <= 0:
                break
            done += n
        self.bytes_read += done
        return done

    def read(self, offset: int, length: int) -> bytes:  # a ByteSource, for the header reader
        buffer = bytearray(max(0, min(length, self._size - offset)))
        n = self.readinto(offset, memoryview(buffer)) if buffer else 0
        return bytes(buffer[:n])

    def close(self) -> None:
        os.close(self._fd)


Opener = Callable[[str], ByteReader]  # location -> reader


@dataclass(frozen=True)
class SourceFile:
    name: str  # the file's base name, as source_model.files[] records it
    location: str  # a local absolute path, or the file's path in the Hub repo
    size: int
    header: GGUFHeader
    raw_header: bytes  # the file's first bytes, as the header read fetched them (>= header)
    attested_sha256: str | None = None  # the Hub's LFS sha256, checked against the stream


@dataclass(frozen=True)
class SourceTensor:
    info: TensorInfo
    shard: int  # index into SourceModel.files
    start: int  # absolute offset of its bytes in that file

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def n_bytes(self) -> int:
        return self.info.n_bytes


@dataclass(frozen=True)
class ProjectorFile:
    """A projector, copied verbatim (its header was read to check it is a GGUF)."""

    name: str
    location: str
    size: int
    tensor_count: int
    tensor_bytes: int
    attested_sha256: str | None = None
    prefix: bytes = field(default=b"", repr=False)  # the bytes the header read fetched


def read_projector(name: str, location: str, source: ByteSource, size: int,
                   attested_sha256: str | None = None) -> ProjectorFile:
    header, prefix = read_header_and_bytes(source)
    if not isinstance(header, GGUFHeader):
        raise Refused(f"projector {name}: not a readable GGUF header: "
                      f"{header.message}", code="bad_source")
    return ProjectorFile(name, location, size, len(header.tensors),
                         sum(t.n_bytes for t in header.tensors), attested_sha256, prefix)


@dataclass
class SourceModel:
    kind: Literal["local", "hub"]
    files: list[SourceFile]
    tensors: list[SourceTensor]
    opener: Opener
    projectors: list[ProjectorFile] = field(default_factory=list)
    repo: str | None = None
    revision: str | None = None  # the resolved commit (Hub)
    requested_revision: str | None = None
    closer: Callable[[], None] | None = None  # releases the Hub connections
    transfer: Any = None  # a Hub source's meshcert.core.hub.stats.TransferCounter
    # a Hub source: the publisher files found at the resolved revision (meshcert.writer.publisher)
    publisher_files: list[Any] = field(default_factory=list)

    def close(self) -> None:
        if self.closer is not None:
            self.closer()
            self.closer = None

    @property
    def primary(self) -> SourceFile:
        return self.files[0]

    @property
    def header(self) -> GGUFHeader:
        return self.files[0].header

    @property
    def architecture(self) -> str:
        arch = self.header.architecture
        assert arch is not None  # checked by assemble()
        return arch

    def kv_int(self, suffix: str) -> int | None:
        value = self.header.kv.get(f"{self.architecture}.{suffix}")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def block_count(self) -> int:
        count = self.kv_int("block_count")
        assert count is not None  # checked by assemble()
        return count

    @property
    def alignment(self) -> int:
        return self.header.alignment

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def kv_entries(self) -> list[tuple[str, bytes]]:
        """(key, raw wire bytes) of the primary's metadata, in file order, split.* left out."""
        raw = self.primary.raw_header
        return [(key, raw[start:end]) for key, (start, end) in self.header.kv_spans.items()
                if key not in SPLIT_KEYS]


def shard_locations(name: str) -> tuple[list[str], int] | None:
    """The names of every shard of the set `name` is the first of, or None for one file;
    raises Refused for a shard other than the first."""
    match = SPLIT_NAME.match(name)
    if match is None:
        return None
    index, count = int(match["index"]), int(match["count"])
    if count < 1 or index < 1 or index > count:
        raise Refused(f"{name}: shard index {index} outside 1..{count}", code="bad_source")
    if index != 1:
        raise Refused(f"{name} is shard {index} of {count}: give the first shard "
                      f"({match['stem']}-00001-of-{count:05d}.gguf)", code="usage")
    return [f"{match['stem']}-{i:05d}-of-{count:05d}.gguf" for i in range(1, count + 1)], count


def read_file_header(name: str, location: str, source: ByteSource, size: int,
                     attested_sha256: str | None = None) -> SourceFile:
    header, raw = read_header_and_bytes(source)
    if not isinstance(header, GGUFHeader):
        raise Refused(f"{name}: not a readable GGUF header: {header.message}", code="bad_source")
    return SourceFile(name, location, size, header, raw, attested_sha256)


def load_local(path: str, projectors: list[str] | None = None) -> SourceModel:
    """The local source named by `path` (a GGUF, or the first shard of a split set)."""
    full = os.path.abspath(path)
    if not os.path.isfile(full):
        raise Refused(f"{path}: no such file", code="usage")
    folder, name = os.path.split(full)
    shards = shard_locations(name)
    names = shards[0] if shards else [name]
    missing = [n for n in names if not os.path.isfile(os.path.join(folder, n))]
    if missing:
        raise Refused(f"missing sibling shard(s) of {name}: "
                      f"{', '.join(missing)} (expected in {folder})", code="missing_sibling")
    files = []
    for shard in names:
        location = os.path.join(folder, shard)
        try:
            reader = LocalReader(location)
        except OSError as exc:
            raise Refused(f"{shard}: cannot open: {exc.strerror or exc}",
                          code="bad_source") from None
        try:
            files.append(read_file_header(shard, location, reader, reader.size))
        finally:
            reader.close()
    extra = []
    for item in projectors or []:
        location = os.path.abspath(item)
        if not os.path.isfile(location):
            raise Refused(f"projector {item}: no such file", code="usage")
        reader = LocalReader(location)
        try:
            extra.append(read_projector(os.path.basename(location), location, reader,
                                        reader.size))
        finally:
            reader.close()
    return assemble("local", files, LocalReader, extra)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _check_header(f: SourceFile) -> None:
    h = f.header
    if h.byte_order != "<":
        raise Refused(f"{f.name}: a big-endian GGUF (llama.cpp refuses it)", code="bad_source")
    if h.duplicate_keys:
        raise Refused(f"{f.name}: duplicate metadata key(s): "
                      f"{', '.join(h.duplicate_keys[:5])}", code="hostile_source")
    if h.duplicate_tensors:
        raise Refused(f"{f.name}: duplicate tensor name(s): "
                      f"{', '.join(h.duplicate_tensors[:5])}", code="hostile_source")
    spans = sorted((t.offset, t.offset + t.n_bytes, t.name) for t in h.tensors)
    for t in h.tensors:
        if t.n_bytes <= 0:
            raise Refused(f"{f.name}: tensor {t.name} has an unknown type "
                          f"({t.ggml_type}) or no elements", code="bad_source")
        if h.data_offset + t.offset + t.n_bytes > f.size:
            raise Refused(f"{f.name}: tensor {t.name} lies past the end of the "
                          f"file ({f.size} bytes)", code="bad_source")
    for (_, end, a), (start, _, b) in zip(spans, spans[1:], strict=False):
        if start < end:
            raise Refused(f"{f.name}: tensors {a} and {b} overlap", code="hostile_source")


def _check_split(files: list[SourceFile]) -> None:
    n = len(files)
    total = sum(len(f.header.tensors) for f in files)
    for i, f in enumerate(files):
        kv = f.header.kv
        no, count = _int(kv.get("split.no")), _int(kv.get("split.count"))
        if n == 1:
            if count is not None and count > 1:
                raise Refused(f"{f.name} says it is shard {(no or 0) + 1} "
                              f"of {count} (split.count), but it is not named as a shard",
                              code="sibling_mismatch")
            continue
        if no != i or count != n:
            raise Refused(f"{f.name}: split.no={kv.get('split.no')!r}, "
                          f"split.count={kv.get('split.count')!r}; expected {i} and {n}",
                          code="sibling_mismatch")
        declared = _int(kv.get("split.tensors.count"))
        if declared is not None and declared != total:
            raise Refused(f"{f.name}: split.tensors.count is {declared} "
                          f"but the shards hold {total} tensors", code="sibling_mismatch")


def assemble(kind: Literal["local", "hub"], files: list[SourceFile], opener: Opener,
             projectors: list[ProjectorFile] | None = None, **identity: Any) -> SourceModel:
    """Check the shards against each other and list every tensor with where its bytes are."""
    for f in files:
        _check_header(f)
    _check_split(files)
    primary = files[0].header
    arch = primary.architecture
    if not arch:
        raise Refused(f"{files[0].name}: no general.architecture", code="bad_source")
    blocks = _int(primary.kv.get(f"{arch}.block_count"))
    if blocks is None or blocks < 1:
        raise Refused(f"{files[0].name}: no positive {arch}.block_count", code="bad_source")
    tensors: list[SourceTensor] = []
    seen: dict[str, str] = {}
    for i, f in enumerate(files):
        for t in sorted(f.header.tensors, key=lambda t: t.offset):
            if t.name in seen:
                raise Refused(f"tensor {t.name} is in both {seen[t.name]} "
                              f"and {f.name}", code="sibling_mismatch")
            seen[t.name] = f.name
            tensors.append(SourceTensor(t, i, f.header.data_offset + t.offset))
    return SourceModel(kind, files, tensors, opener, list(projectors or []), **identity)
