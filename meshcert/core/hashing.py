"""Parallel SHA-256 of many files with bounded memory.

hashlib releases the GIL while hashing buffers larger than 2 KiB, so a thread per core hashes
files truly in parallel; each worker reuses one fixed buffer (readinto), so memory stays at
workers x CHUNK no matter how big the files are. `bench/hash_throughput.py` measures the gain.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.parallel import Cancelled, map_cancellable
from meshcert.core.progress import NullProgress, ProgressObserver
from meshcert.core.verify_cache import VerifyCache

__all__ = ["HashResult", "HashingInterrupted", "VerifyCache", "hash_files", "sha256_file"]

CHUNK = 4 * 1024 * 1024


@dataclass(frozen=True)
class HashResult:
    path: str
    sha256: str | None
    error: str | None = None
    cached: bool = False


class HashingInterrupted(MeshcertError):
    """Hashing was cancelled (Ctrl-C); results so far are attached."""

    kind = ErrorKind.INTERRUPTED

    def __init__(self, results: dict[str, HashResult]) -> None:
        super().__init__("hashing interrupted")
        self.results = results


def sha256_file(path: str, on_bytes: Callable[[int], None] | None = None,
                cancel: threading.Event | None = None) -> str:
    """SHA-256 of one file, streamed through a fixed buffer. Raises OSError on read failure
    and when the file changes size while it is being read."""
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:
        expected = os.fstat(handle.fileno()).st_size
        # a buffer no larger than the file: zeroing 4 MiB per small fragment is most of its cost
        view = memoryview(bytearray(max(1, min(CHUNK, expected))))
        total = 0
        while total < expected:  # never read past the size seen at open: growth is an error
            if cancel is not None and cancel.is_set():
                raise InterruptedError("cancelled")
            n = handle.readinto(view[:min(CHUNK, expected - total)])
            if not n:
                break
            digest.update(view[:n])
            total += n
            if on_bytes is not None:
                on_bytes(n)
        now = os.fstat(handle.fileno()).st_size
        if total != expected or now != expected:
            raise OSError(f"file changed size while hashing ({expected} -> "
                          f"{now if total == expected else total} bytes)")
    return digest.hexdigest()


# Below this many bytes in all, files are hashed in the calling thread: a pool's threads would
# start, contend with the rest of start-up and finish in about the time one thread needs alone
# (16 MiB is ~10 ms of SHA-256 here).
SMALL_TOTAL_BYTES = 16 << 20


def hash_files(
    paths: Iterable[str],
    *,
    workers: int | None = None,
    progress: ProgressObserver | None = None,
    cache: VerifyCache | None = None,
) -> dict[str, HashResult]:
    """Hash every path in parallel. Read errors become results, never exceptions.

    Raises HashingInterrupted (with the results so far) on KeyboardInterrupt.
    """
    todo = list(dict.fromkeys(paths))
    progress = progress or NullProgress()
    results: dict[str, HashResult] = {}
    pending: list[str] = []
    for path in todo:
        cached = cache.get(path) if cache else None
        if cached is not None:
            results[path] = HashResult(path, cached, cached=True)
        else:
            pending.append(path)
    total = 0
    for path in pending:
        with contextlib.suppress(OSError):
            total += os.path.getsize(path)

    def work(path: str, cancel: threading.Event) -> HashResult:
        try:
            digest = sha256_file(path, progress.advance, cancel)
        except InterruptedError:
            return HashResult(path, None, "interrupted")
        except OSError as exc:
            return HashResult(path, None, f"{type(exc).__name__}: {exc.strerror or exc}")
        if cache:
            cache.put(path, digest)
        return HashResult(path, digest)

    if workers is None:  # one thread per core, unless the bytes are too few to share
        workers = 1 if total < SMALL_TOTAL_BYTES else min(len(pending), os.cpu_count() or 1)
    progress.begin("sha256", total)
    try:
        results |= map_cancellable(pending, work, name="sha256", workers=workers)
    except Cancelled as stop:
        raise HashingInterrupted({**results, **stop.results}) from None
    finally:
        progress.end()
    if cache:
        cache.save()
    return results
