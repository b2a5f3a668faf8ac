"""`package write ... --publish ns/repo [--delete-after-upload]`: each artifact goes to the Hub
as soon as the writer has written and verified it, so the disk a write needs is a few artifacts,
not the package (an HF job's ephemeral disk is 50 GB; mesh-llm's jobs were evicted there).

`StreamingPublisher` is the writer's `ArtifactSink`: `ready()` queues an artifact with the
SHA-256 the writer computed on the way (nothing is hashed again), an uploader thread commits
what is queued (`meshcert.publish.service.Upload`: re-planned against the target on every attempt,
so a re-run skips what is already there; retried with backoff), and, with `delete_after_upload`,
removes each file once its commit has landed. The writer is held (`wait_for_room`) while `room`
finished artifacts wait for upload. `finish()` commits `model-package.json` and the model card last,
once every artifact is on the target. An upload that fails for good stops the write (the next chunk
raises) and leaves no manifest on the target.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from meshcert.core.errors import MeshcertError
from meshcert.core.hub.errors import HubError
from meshcert.publish.plan import (
    DEFAULT_MAX_BYTES_PER_COMMIT,
    DEFAULT_MAX_FILES_PER_COMMIT,
    LocalFile,
    local_file,
    stat_key,
)
from meshcert.publish.requests import Progress, PublishRequest, PublishResult
from meshcert.publish.service import Upload

if TYPE_CHECKING:
    from meshcert.publish.hub_writer import HubWriter
    from meshcert.writer.artifact import PackagePlan
    from meshcert.writer.stream import ArtifactResult

IN_FLIGHT_WRITES = 2  # artifacts the writer may have open at once beyond the queue (estimate)


class UploadStopped(MeshcertError, RuntimeError):
    """The uploader failed for good; the write stops at its next chunk."""


def streaming_disk_bytes(plan: PackagePlan, room: int) -> int:
    """Disk a streaming write needs: the artifacts open in the writer, plus `room` finished
    ones waiting for upload, sized by the largest artifacts of the plan."""
    sizes = sorted((a.size for a in plan.all_artifacts()), reverse=True)
    return sum(sizes[:IN_FLIGHT_WRITES + room])


class StreamingPublisher:
    def __init__(self, request: PublishRequest, hub: HubWriter, result: PublishResult, *,
                 delete_after_upload: bool, room: int = 2, say: Progress | None = None) -> None:
        self.upload = Upload(request, hub, result, say or (lambda _m: None))
        self._delete = delete_after_upload
        self._room = room
        self._limits = (request.max_files_per_commit or DEFAULT_MAX_FILES_PER_COMMIT,
                        request.max_bytes_per_commit or DEFAULT_MAX_BYTES_PER_COMMIT)
        self._cond = threading.Condition()
        self._pending: list[LocalFile] = []
        self._busy = 0  # taken by the uploader, not yet committed
        self._closed = False
        self._released: set[str] = set()
        self.files: list[LocalFile] = []  # every artifact handed over, in order
        self.failure: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="publish-stream", daemon=True)
        self._batches = 0

    # --- the writer's side (ArtifactSink) --------------------------------------------------
    def start(self) -> None:
        """The target exists (created if need be) before the first byte is written."""
        self.upload.begin()
        self._thread.start()

    def ready(self, result: ArtifactResult, path: Path) -> None:
        item = local_file(result.path, str(path), result.size, result.sha256,
                          stat_key(str(path)))
        with self._cond:
            self.files.append(item)
            self._pending.append(item)
            self._cond.notify_all()

    def wait_for_room(self, cancel: threading.Event) -> None:
        with self._cond:
            while (len(self._pending) + self._busy >= self._room and self.failure is None
                   and not cancel.is_set()):
                self._cond.wait(0.2)
            if self.failure is not None:
                raise UploadStopped(f"uploading to {self.upload.request.target} failed: "
                                    f"{_describe(self.failure)}")

    def released(self, rel: str) -> bool:
        with self._cond:
            return rel in self._released

    # --- the uploader --------------------------------------------------------------------
    def _take(self) -> list[LocalFile] | None:
        with self._cond:
            while not self._pending and not self._closed:
                self._cond.wait(0.5)
            if not self._pending:
                return None
            group: list[LocalFile] = []
            size = 0
            max_files, max_bytes = self._limits
            while self._pending and len(group) < max_files and (
                    not group or size + self._pending[0].size <= max_bytes):
                item = self._pending.pop(0)
                group.append(item)
                size += item.size
            self._busy = len(group)
            return group

    def _run(self) -> None:
        while True:
            group = self._take()
            if group is None:
                return
            self._batches += 1
            try:
                self.upload.upload(group, f"artifacts, batch {self._batches}", None)
            except BaseException as exc:  # kept: the writer and finish() raise it
                with self._cond:
                    self.failure = exc
                    self._busy = 0
                    self._cond.notify_all()
                return
            if self._delete:
                for item in group:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(item.local_path)
            with self._cond:
                if self._delete:
                    self._released.update(item.path for item in group)
                self._busy = 0
                self._cond.notify_all()

    def close(self) -> None:
        """No more artifacts: let the uploader drain what is queued, and wait for it."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        if self._thread.is_alive():
            self._thread.join()

    def finish(self, manifest_raw: bytes, card: bytes) -> str:
        """Every artifact uploaded, then the manifest and card: the commit they landed in."""
        self.close()
        if self.failure is not None:
            raise self.failure
        return self.upload.finish(self.files, manifest_raw, card)


def _describe(exc: BaseException) -> str:
    return exc.message if isinstance(exc, HubError) else str(exc)
