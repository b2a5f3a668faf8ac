"""Streamed SHA-256 of whole artifacts: parallel across files, bounded memory, nothing kept."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from certify.hub.errors import HubError
from certify.hub.files import HubFiles
from certify.progress import ProgressObserver


@dataclass(frozen=True)
class StreamResult:
    path: str
    sha256: str | None
    size: int | None = None  # bytes actually hashed
    error: HubError | None = None


class StreamInterrupted(Exception):
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
    cancel = threading.Event()
    results: dict[str, StreamResult] = {}

    def work(path: str) -> StreamResult:
        try:
            digest, size = files.sha256(path, on_bytes=progress.advance,
                                        cancelled=cancel.is_set)
        except HubError as err:
            return StreamResult(path, None, error=err)
        return StreamResult(path, digest, size)

    progress.begin("sha256 (streamed from the Hub)", sum(s or 0 for s in sizes.values()))
    pool = ThreadPoolExecutor(max_workers=max(1, min(workers, len(order) or 1)),
                              thread_name_prefix="hub-sha256")
    try:
        futures = [(path, pool.submit(work, path)) for path in order]
        for path, future in futures:
            results[path] = future.result()
    except KeyboardInterrupt:
        cancel.set()
        pool.shutdown(wait=True, cancel_futures=True)
        raise StreamInterrupted(results) from None
    finally:
        pool.shutdown(wait=True)
        progress.end()
    return results
