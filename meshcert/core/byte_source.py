"""Random-access byte reading behind one small interface (local file or HTTP ranges)."""

from __future__ import annotations

import os
from typing import Protocol


class ByteSource(Protocol):
    """Something GGUF headers can be read from: a size (None when unknown) and ranged reads.

    `read` returns at most `length` bytes starting at `offset`; fewer only at end of file.
    """

    @property
    def size(self) -> int | None: ...

    def read(self, offset: int, length: int) -> bytes: ...


class LocalFileSource:
    """Positional reads from a local file, counting the bytes read."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._path = os.fspath(path)
        self._size = os.path.getsize(self._path)
        self.bytes_read = 0

    @property
    def size(self) -> int | None:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length <= 0 or offset >= self._size:
            return b""
        with open(self._path, "rb") as handle:
            handle.seek(offset)
            data = handle.read(length)
        self.bytes_read += len(data)
        return data


class BytesSource:
    """In-memory bytes (tests, and small files already fetched)."""

    def __init__(self, data: bytes) -> None:
        self._data = data
        self.bytes_read = 0

    @property
    def size(self) -> int | None:
        return len(self._data)

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length <= 0:
            return b""
        chunk = self._data[offset:offset + length]
        self.bytes_read += len(chunk)
        return chunk


class TailCache:
    """A ByteSource that remembers the last block it read, so a read inside that block costs
    nothing: the bytes right after a GGUF header usually arrive with the header's last block
    (one HTTP range request saved per fragment)."""

    def __init__(self, inner: ByteSource) -> None:
        self._inner = inner
        self._start = 0
        self._data = b""

    @property
    def size(self) -> int | None:
        return self._inner.size

    def read(self, offset: int, length: int) -> bytes:
        end = offset + length
        if self._start <= offset and end <= self._start + len(self._data):
            return self._data[offset - self._start:end - self._start]
        data = self._inner.read(offset, length)
        self._start, self._data = offset, data
        return data
