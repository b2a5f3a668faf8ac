"""Tensor bytes from the source into the artifacts, hashed on the way, in bounded memory.

Each source file is read once, front to back, in CHUNK-sized reads into a small pool of reused
buffers, and each chunk passes three stages, each on its own thread (hashlib, xxhash and the
positional reads and writes release the GIL, so the stages overlap on separate cores: the two
SHA-256 passes, the source's and the artifacts', are never on one thread):

1. the source file's SHA-256, and each tensor's source-side xxh3-128;
2. the tensor's bytes `pwrite`n to every artifact that stores it (v1 metadata-role tensors go
   to every fragment);
3. each artifact's SHA-256, taken over the bytes in file order as long as they arrive in that
   order (header, padding and tensors), and each tensor's package-side xxh3-128, taken over the
   same bytes after they were written.

The per-tensor check (certification's `--source` comparison, and the writer's own before it
finishes) compares the two xxh3-128 digests: the one taken as the bytes were read and the one
taken after they went to the artifacts, so a buffer reused too early, a piece routed to the
wrong tensor or a byte changed in memory between reading and writing is caught. It was a third
SHA-256 pass; it needs no cryptographic strength (the published digests, the source's and the
artifacts', are SHA-256 and are compared with the Hub's and the manifest's), only to catch an
accidental difference, which a 128-bit xxh3 misses with probability 2^-128. xxh3-128 runs at
~10 GB/s per core here against SHA-256's ~1.3 GB/s (BLAKE3, single-threaded, ~3.9 GB/s; zlib's
CRC-32 ~3.3 GB/s and only 32 bits), so both sides together cost about a fifth of one SHA-256
pass.

When an artifact's tensors arrive out of order (v2 sorts by name; a source rarely is), its
digest is finished by reading the file back from the first byte not yet hashed, on the
finisher thread, which also re-opens the header (meshcert.writer.verify) and runs the hook. So the
source is read once, an artifact at most once more (only what could not be hashed on the way),
and memory is the buffer pool plus the headers, whatever the tensor sizes.

`--resume`: an existing artifact is opened as it is; every byte about to be written is first
compared with what the file holds and written only when it differs (header, padding and
tensors alike), so the file is re-verified against the source, never trusted, and named as
rewritten when anything had to change.
"""

from __future__ import annotations

import hashlib
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import xxhash

from meshcert.core.gguf.model import GGUFHeader
from meshcert.writer.artifact import Artifact
from meshcert.writer.errors import Aborted, Interrupted
from meshcert.writer.source import ByteReader, SourceTensor
from meshcert.writer.verify import verify_written

TENSOR_DIGEST = "xxh3-128"  # the per-tensor check's digest (see above)

# 1 MiB chunks: measured on the bench's 1.5 GB source (2 cores), 8 MiB chunks cost 2.6 s of
# kernel time where 1 MiB chunks cost 0.6-0.8 s (the three stages then read a chunk while it
# is still in cache), for the same user time
CHUNK = 1 << 20
BUFFERS = 10  # chunks in flight: one per stage plus slack (10 MiB)


class WriteProgress(Protocol):
    def begin(self, label: str, total: int | None) -> None: ...

    def advance(self, amount: int) -> None: ...

    def artifact_done(self, path: str, done: int, total: int) -> None: ...

    def end(self) -> None: ...


class NullWriteProgress:
    def begin(self, label: str, total: int | None) -> None:
        return None

    def advance(self, amount: int) -> None:
        return None

    def artifact_done(self, path: str, done: int, total: int) -> None:
        return None

    def end(self) -> None:
        return None


Signature = tuple[int, int, int, int]  # size, mtime_ns, ctime_ns, inode


def signature(path: Path) -> Signature:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def fsignature(fd: int) -> Signature:
    """`signature` of an open file."""
    st = os.fstat(fd)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


@dataclass
class ArtifactResult:
    path: str
    size: int
    sha256: str
    rewritten: bool  # --resume: the file existed and some bytes had to be written again
    existed: bool
    header: GGUFHeader | None = None  # as re-opened
    signature: Signature = (0, 0, 0, 0)
    read_back: int = 0  # bytes hashed by reading the file back


def _pwrite_all(fd: int, data: memoryview | bytes, offset: int) -> None:
    view = memoryview(data)
    while view:
        n = os.pwrite(fd, view, offset)
        view, offset = view[n:], offset + n


def _pread_exact(fd: int, length: int, offset: int) -> bytes:
    return os.pread(fd, length, offset)


class Target:
    """One artifact file being written (touched by the delivery stage only, until complete)."""

    def __init__(self, root: Path, artifact: Artifact, resume: bool) -> None:
        self.artifact = artifact
        self.path = root / artifact.path
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.existed = resume and self.path.exists()
        self.rewritten = False
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT | (0 if self.existed else os.O_TRUNC),
                          0o644)
        self.closed = False
        self.completed: Signature = (0, 0, 0, 0)  # as the last byte was written
        self.digest = hashlib.sha256()
        self.remaining = artifact.tensor_bytes
        self.expect = 0
        self.in_order = True
        size = os.fstat(self.fd).st_size
        if size != artifact.size:
            os.ftruncate(self.fd, artifact.size)  # zeros: the padding and the tensors to come
            self.rewritten = self.existed
        header = b"" if artifact.verbatim else b"".join(artifact.header_pieces())
        self._put(header, 0)
        self.digest.update(header)
        self.cursor = len(header)
        if self.existed:
            self._zero_padding()

    def _put(self, data: memoryview | bytes, offset: int) -> None:
        if self.existed:
            if _pread_exact(self.fd, len(data), offset) == data:
                return
            self.rewritten = True
        _pwrite_all(self.fd, data, offset)

    def _zero_padding(self) -> None:
        """--resume: the alignment gaps must hold zeros (the in-order digest assumes them)."""
        base, cursor = self.artifact.data_offset, 0
        for p in self.artifact.placements:
            if p.offset > cursor:
                self._put(bytes(p.offset - cursor), base + cursor)
            cursor = p.offset + p.n_bytes
        if base + cursor < self.artifact.size:
            self._put(bytes(self.artifact.size - base - cursor), base + cursor)

    def write(self, index: int, within: int, data: memoryview) -> None:
        """Bytes [within, within+len) of placement `index`, into the file."""
        p = self.artifact.placements[index]
        self._put(data, self.artifact.data_offset + p.offset + within)

    def account(self, index: int, within: int, data: memoryview) -> bool:
        """The same bytes, once written: into the digest while they come in file order;
        True once the artifact is whole."""
        p = self.artifact.placements[index]
        start = self.artifact.data_offset + p.offset
        at = start + within
        if self.in_order:
            if index != self.expect:
                self.in_order = False
            else:
                if within == 0 and self.cursor <= start:
                    self.digest.update(bytes(start - self.cursor))  # alignment padding
                    self.cursor = start
                if at == self.cursor:
                    self.digest.update(data)
                    self.cursor += len(data)
                    if self.cursor == start + p.n_bytes:
                        self.expect += 1
                else:
                    self.in_order = False
        self.remaining -= len(data)
        return self.remaining == 0

    @property
    def complete(self) -> bool:
        return self.remaining == 0

    def finish(self, buffer: memoryview) -> tuple[str, int]:
        """The file's SHA-256: what was not hashed on the way is read back (or, when every
        tensor came in order, is the trailing padding: zeros). Closes the file."""
        read_back = 0
        try:
            size = self.artifact.size
            if self.in_order and self.expect == len(self.artifact.placements):
                self.digest.update(bytes(size - self.cursor))
            else:
                position = self.cursor
                while position < size:
                    n = os.preadv(self.fd, [buffer[:min(len(buffer), size - position)]],
                                  position)
                    if n <= 0:
                        raise Aborted("verification_failed", f"{self.artifact.path} ends at "
                                      f"{position}, before its planned {size} bytes")
                    self.digest.update(buffer[:n])
                    position += n
                    read_back += n
            return self.digest.hexdigest(), read_back
        finally:
            self.abandon()

    def copy_in(self, data: memoryview, offset: int) -> None:
        """A verbatim copy's bytes, in file order (a projector)."""
        self._put(data, offset)
        if offset != self.cursor:
            self.in_order = False
        elif self.in_order:
            self.digest.update(data)
            self.cursor += len(data)

    def abandon(self) -> None:
        """Close the file (once: a closed descriptor number may already name another file)."""
        if not self.closed:
            self.closed = True
            os.close(self.fd)


Hook = Callable[[Artifact, Path], None]  # runs after an artifact is verified; raises Aborted


class ArtifactSink(Protocol):
    """Where finished artifacts go next (`package write --publish`: the Hub). `ready` is called
    once per artifact, after it is verified and hooked; `wait_for_room` holds the stream while
    too many finished artifacts wait to be taken (so the disk in use stays a few artifacts);
    `released` says whether the sink has taken an artifact's file away (uploaded, deleted)."""

    def ready(self, result: ArtifactResult, path: Path) -> None: ...
    def wait_for_room(self, cancel: threading.Event) -> None: ...
    def released(self, rel: str) -> bool: ...


@dataclass
class StreamState:
    """Everything the stream learns, for the manifest and for certification."""

    source_sha256: dict[int, str] = field(default_factory=dict)  # shard index -> digest
    # TENSOR_DIGEST of each tensor's bytes as read from the source, and as handed to the
    # artifacts (every artifact that stores a tensor gets the same bytes: one digest)
    tensor_digest: dict[str, str] = field(default_factory=dict)
    package_tensor_digest: dict[str, str] = field(default_factory=dict)
    artifacts: dict[str, ArtifactResult] = field(default_factory=dict)  # by artifact path


class Finisher:
    """Finishes complete artifacts in completion order, off the stream's threads: the rest of
    the digest, the re-opened header, the hook."""

    def __init__(self, state: StreamState, hook: Hook | None, progress: WriteProgress,
                 total: int, cancel: threading.Event, sink: ArtifactSink | None = None
                 ) -> None:
        self._state, self._hook, self._progress = state, hook, progress
        self.sink = sink
        self._total, self._cancel = total, cancel
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="writer-finish")
        self._buffer = memoryview(bytearray(CHUNK))
        self._futures: list[Future[None]] = []
        self._lock = threading.Lock()
        self.failure: BaseException | None = None

    def submit(self, target: Target) -> None:
        """Finish `target`, whose last byte was just written. Its signature is taken now,
        before anything is hashed or read back: whatever changes the file from here on (another
        process, a hook) changes its size, mtime, ctime or inode, so the writer's closing
        check (`meshcert.writer.write`) and the digest cache certification reads
        (VerifyCache, keyed the same way) both see it."""
        target.completed = fsignature(target.fd)
        self._futures.append(self._pool.submit(self._finish, target))

    def _finish(self, target: Target) -> None:
        if self.failure is not None or self._cancel.is_set():
            target.abandon()
            return
        try:
            digest, read_back = target.finish(self._buffer)
            header = verify_written(target.path, target.artifact)
            if self._hook is not None:
                self._hook(target.artifact, target.path)
            result = ArtifactResult(target.artifact.path, target.artifact.size, digest,
                                    target.rewritten, target.existed, header,
                                    target.completed, read_back)
            with self._lock:
                self._state.artifacts[target.artifact.path] = result
                done = len(self._state.artifacts)
            self._progress.artifact_done(target.artifact.path, done, self._total)
            if self.sink is not None:
                self.sink.ready(result, target.path)
        except BaseException as exc:
            self.failure = exc  # the stream sees it at its next chunk and stops
            raise

    def throttle(self) -> None:
        """Hold the caller (the stream, before its next chunk) while the sink has no room."""
        if self.sink is not None:
            self.sink.wait_for_room(self._cancel)

    def wait(self) -> None:
        """Block until every artifact submitted so far is finished; re-raise the first
        failure."""
        for future in list(self._futures):
            while not future.done():
                try:
                    future.exception(timeout=0.2)  # a short wait keeps Ctrl-C deliverable
                except TimeoutError:
                    continue
        if self.failure is not None:
            raise self.failure

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class _Stage(threading.Thread):
    def __init__(self, name: str, work: Callable[[int, int, int], None],
                 inbox: queue.Queue[tuple[int, int, int] | None],
                 outbox: queue.Queue[tuple[int, int, int] | None],
                 errors: list[BaseException], stop: threading.Event) -> None:
        super().__init__(name=name, daemon=True)
        self._work, self._inbox, self._outbox = work, inbox, outbox
        self._errors, self._halt = errors, stop

    def run(self) -> None:
        while True:
            item = self._inbox.get()
            if item is None:
                self._outbox.put(None)
                return
            if not self._halt.is_set():
                try:
                    self._work(*item)
                except BaseException as exc:
                    self._errors.append(exc)
                    self._halt.set()
            self._outbox.put(item)


def fill(reader: ByteReader, prefix: bytes, position: int, buffer: memoryview) -> int:
    """Bytes from `position` into `buffer`: from `prefix` (what the header read already
    fetched: never fetched twice) while it lasts, then from the reader."""
    want = min(len(buffer), reader.size - position)
    if position < len(prefix):
        n = min(want, len(prefix) - position)
        buffer[:n] = prefix[position:position + n]
    else:
        n = reader.readinto(position, buffer[:want])
    if n <= 0 or (position >= len(prefix) and n != want):
        raise Aborted("source_changed", f"the source ended at {position + max(n, 0)} bytes, "
                      f"{reader.size} were expected")
    return n


def stream_file(reader: ByteReader, prefix: bytes, shard: int, tensors: list[SourceTensor],
                destinations: dict[str, list[tuple[Target, int]]], state: StreamState,
                finisher: Finisher, progress: WriteProgress, cancel: threading.Event) -> str:
    """Read one source file front to back (its first bytes from `prefix`); returns its
    SHA-256."""
    views, free, queues = _buffer_ring()
    errors: list[BaseException] = []
    whole = hashlib.sha256()
    read_side = {t.name: xxhash.xxh3_128() for t in tensors}
    written_side = {t.name: xxhash.xxh3_128() for t in tensors}
    overlapping = _overlap_finder(sorted(tensors, key=lambda t: t.start))
    hash_cursor, write_cursor, account_cursor = [0], [0], [0]

    def hash_source(index: int, position: int, n: int) -> None:
        view = views[index]
        whole.update(view[:n])
        for t, low, high in overlapping(position, n, hash_cursor):
            read_side[t.name].update(view[low - position:high - position])
            if high == t.start + t.n_bytes:
                state.tensor_digest[t.name] = read_side.pop(t.name).hexdigest()

    def write(index: int, position: int, n: int) -> None:
        view = views[index]
        for t, low, high in overlapping(position, n, write_cursor):
            piece = view[low - position:high - position]
            for target, k in destinations.get(t.name, ()):
                target.write(k, low - t.start, piece)

    def account(index: int, position: int, n: int) -> None:
        view = views[index]
        for t, low, high in overlapping(position, n, account_cursor):
            piece = view[low - position:high - position]
            written_side[t.name].update(piece)
            if high == t.start + t.n_bytes:
                state.package_tensor_digest[t.name] = written_side.pop(t.name).hexdigest()
            for target, k in destinations.get(t.name, ()):
                if target.account(k, low - t.start, piece):
                    finisher.submit(target)
        progress.advance(n)

    stop = threading.Event()
    stages = [_Stage("writer-sha-source", hash_source, queues[0], queues[1], errors, stop),
              _Stage("writer-write", write, queues[1], queues[2], errors, stop),
              _Stage("writer-sha-artifacts", account, queues[2], free, errors, stop)]
    for stage in stages:
        stage.start()
    position = 0
    try:
        while position < reader.size:
            if cancel.is_set() or stop.is_set() or finisher.failure is not None:
                break
            finisher.throttle()
            item = free.get()
            assert item is not None
            index = item[0]
            n = fill(reader, prefix, position, views[index])
            queues[0].put((index, position, n))
            position += n
    except BaseException:
        stop.set()
        raise
    finally:
        queues[0].put(None)
        for stage in stages:
            while stage.is_alive():
                stage.join(0.2)
    _raise_unfinished(errors, finisher, cancel)
    _check_tensor_digests(tensors, state)
    state.source_sha256[shard] = whole.hexdigest()
    return state.source_sha256[shard]


def _buffer_ring() -> tuple[list[memoryview], queue.Queue[tuple[int, int, int] | None],
                            list[queue.Queue[tuple[int, int, int] | None]]]:
    """BUFFERS reused chunk buffers, all of them free at first, and the queues that hand a
    chunk (buffer index, position, length) to each of the three stages in turn."""
    buffers = [bytearray(CHUNK) for _ in range(BUFFERS)]
    views = [memoryview(b) for b in buffers]
    free: queue.Queue[tuple[int, int, int] | None] = queue.Queue()
    for i in range(BUFFERS):
        free.put((i, 0, 0))
    queues: list[queue.Queue[tuple[int, int, int] | None]] = [queue.Queue() for _ in range(3)]
    return views, free, queues


def _overlap_finder(ordered: list[SourceTensor]) -> Callable[
        [int, int, list[int]], list[tuple[SourceTensor, int, int]]]:
    """What a stage asks of each chunk: the tensors of `ordered` (sorted by start) a chunk
    overlaps, each stage walking them forward from its own cursor."""

    def overlapping(position: int, n: int, cursor: list[int]) -> list[tuple[SourceTensor, int,
                                                                            int]]:
        """(tensor, low, high) absolute overlaps with [position, position+n), in order."""
        out = []
        end = position + n
        i = cursor[0]
        while i < len(ordered) and ordered[i].start + ordered[i].n_bytes <= position:
            i += 1
        cursor[0] = i
        while i < len(ordered) and ordered[i].start < end:
            t = ordered[i]
            out.append((t, max(t.start, position), min(t.start + t.n_bytes, end)))
            i += 1
        return out

    return overlapping


def _raise_unfinished(errors: list[BaseException], finisher: Finisher,
                      cancel: threading.Event) -> None:
    """Why a file's pass stopped early, if it did: a stage's error, the finisher's, a cancel."""
    if errors:
        raise errors[0]
    if finisher.failure is not None:
        raise finisher.failure
    if cancel.is_set():
        raise Interrupted()


def _check_tensor_digests(tensors: list[SourceTensor], state: StreamState) -> None:
    """Every tensor reached the artifacts with the bytes read from the source (its two xxh3-128
    digests agree), or Aborted."""
    changed = [t.name for t in tensors
               if state.tensor_digest.get(t.name) != state.package_tensor_digest.get(t.name)]
    if changed:
        raise Aborted("verification_failed", f"{len(changed)} tensor(s) reached the artifacts "
                      f"with other bytes than were read from the source (e.g. {changed[0]}: "
                      f"{TENSOR_DIGEST} differs)")


def copy_file(reader: ByteReader, prefix: bytes, target: Target, progress: WriteProgress,
              cancel: threading.Event) -> str:
    """A verbatim copy (a projector), hashed once: the digest is the source's and the copy's
    (returned before the target is finished, so the caller can compare it with the Hub's)."""
    buffer = memoryview(bytearray(CHUNK))
    position = 0
    while position < reader.size:
        if cancel.is_set():
            raise Interrupted()
        n = fill(reader, prefix, position, buffer)
        target.copy_in(buffer[:n], position)
        position += n
        progress.advance(n)
    return target.digest.copy().hexdigest()


