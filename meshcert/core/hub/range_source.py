"""A ByteSource over HTTP range reads of one remote file (for GGUF header reads)."""

from __future__ import annotations

from meshcert.core.hub.errors import HubError
from meshcert.core.hub.files import HubFiles


class HubRangeSource:
    """`read(offset, length)` becomes one `Range: bytes=a-b` request (206) on the file.

    The size comes from the Hub listing, so reads are clamped to the file and a read past the
    end costs nothing. A Hub failure is kept in `failure` and raised as HubError (not OSError),
    so a header reader cannot mistake a network problem for a truncated file.
    """

    def __init__(self, files: HubFiles, path: str, size: int | None) -> None:
        self._files = files
        self._path = path
        self._size = size
        self.bytes_read = 0
        self.reads = 0
        self.failure: HubError | None = None

    @property
    def size(self) -> int | None:
        return self._size

    def read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length <= 0:
            return b""
        if self._size is not None:
            if offset >= self._size:
                return b""
            length = min(length, self._size - offset)
        try:
            data = self._files.read_range(self._path, offset, length, header=True)
        except HubError as err:
            self.failure = err
            raise
        self.reads += 1
        self.bytes_read += len(data)
        return data
