"""Streamed SHA-256 of whole artifacts: parallel across files, bounded memory, nothing kept."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.hub.errors import HubError
from meshcert.core.hub.files import HubFiles
from meshcert.core.parallel import Cancelled, map_cancellable
from meshcert.core.progress import ProgressObserver


@dataclass(frozen=True)
class StreamResult:
    path: str
    sha256: str | None
    size: int | None = None  # bytes actually hashed
    error: HubError | None = None


class StreamInterrupted(MeshcertError):
    kind = ErrorKind.INTERRUPTED
    def __init__(self, results: dict[str, StreamResult]) -> None:
        super().__init__("streaming interrupted")
        self.results = results


def stream_hashes(files: HubFiles, sizes: dict[str, int | None], *, workers: int,
                  progress: ProgressObserver) -> dict[str, StreamResult]:
    """Hash every path (largest first, `workers` at a time); Hub failures become results.

    Memory stays at workers x one network read whatever the file sizes. Raises StreamInterrupted
    (with the results so far) on KeyboardInterrupt.
    """
    order = sorted(sizes, key=lambda p: -(sizes[p] or 0))

    def work(path: str, cancel: threading.Event) -> StreamResult:
        try:
            digest, size = files.sha256(path, on_bytes=progress.advance,
                                        cancelled=cancel.is_set)
        except HubError as err:
            return StreamResult(path, None, error=err)
        return StreamResult(path, digest, size)

    progress.begin("sha256 (streamed from the Hub)", sum(s or 0 for s in sizes.values()))
    try:
        return map_cancellable(order, work, workers=workers, name="hub-sha256")
    except Cancelled as stop:
        raise StreamInterrupted(stop.results) from None
    finally:
        progress.end()
