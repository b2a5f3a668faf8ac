"""`package write SOURCE --out-dir DIR --publish ns/repo [--delete-after-upload]`: write the
package and publish it in one pass (the HF job's command).

1. The write is planned (refusals before a byte is written) and the target created.
2. The package is written; each artifact is uploaded as soon as it is written and verified
   (`meshcert.publish.streaming`), and with `delete_after_upload` its file is removed once
   committed, so the disk needed is a few artifacts (the free-disk check asks for that, not the
   package).
3. Kept files: the package is certified locally with the writer's digests (nothing hashed
   again); anything but `passed` and the manifest is never published. Deleted files: the
   writer's own verification stands in (every part's directory re-read and every tensor's
   bytes hashed on their way from the source).
4. `model-package.json` and the model card, last, in one commit.
5. The published commit is certified (`hf://target@commit --package-only`, Hub-attested
   hashes, with `--source` semantics from the digests the writer took). If that fails after a
   deleting write, the manifest is withdrawn again in a further commit: no failing package is
   left advertised at the branch head.
6. With a catalog, the entry pinned at the commit (a pull request when experimental or not
   pushable).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshcert.core.errors import Refused
from meshcert.core.hub.errors import HubError
from meshcert.core.hub.settings import HubSettings
from meshcert.publish.attestation import commit_attestation
from meshcert.publish.hub_writer import HubWriter
from meshcert.publish.requests import Progress, PublishRequest, PublishResult
from meshcert.publish.service import (
    Failed,
    PublishRefused,
    certify_published,
    check_access,
    hub_status,
    list_in_catalog,
    refusal_of_target,
)
from meshcert.publish.streaming import StreamingPublisher, UploadStopped, streaming_disk_bytes
from meshcert.writer.card import render_card

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport
    from meshcert.core.progress import ProgressObserver
    from meshcert.writer.stream import WriteProgress
    from meshcert.writer.write import WriteRequest, WriteResult

ROOM = 2  # finished artifacts that may wait for upload before the writer is held


@dataclass
class WritePublishOutcome:
    publish: PublishResult
    write: WriteResult | None = None
    local_report: CertReport | None = None
    withdrawn_commit: str | None = None  # set when the manifest was withdrawn again


def write_and_publish(write_request: WriteRequest, request: PublishRequest, *,
                      delete_after_upload: bool, hub: HubWriter | None = None,
                      progress: WriteProgress | None = None,
                      certify_progress: ProgressObserver | None = None,
                      say: Progress | None = None) -> WritePublishOutcome:
    """Raises what `meshcert.writer.write` raises before or while writing (Refused, Aborted,
    Interrupted); every Hub outcome is in the returned PublishResult."""
    from meshcert.writer.certify_step import certify_written

    say = say or (lambda _m: None)
    result = PublishResult("refused", "", request.target)
    outcome = WritePublishOutcome(result)
    problem = refusal_of_target(request)
    if problem is not None:
        result.message = problem
        return outcome
    hub = hub or HubWriter(endpoint=HubSettings.from_env().endpoint, token=request.token)
    try:
        check_access(request, hub, say)
    except Refused as exc:
        result.message = f"{exc.message}: nothing written or uploaded"
        return outcome
    publisher = StreamingPublisher(request, hub, result, delete_after_upload=delete_after_upload,
                                   room=ROOM, say=say)
    written = _write_uploading(write_request, publisher, result, progress,
                               delete_after_upload=delete_after_upload)
    if written is None:
        return outcome
    outcome.write = written
    if not delete_after_upload:
        outcome.local_report = certify_written(written, certify_progress)
        if outcome.local_report.status != "passed":
            result.status = "failed"
            result.message = (f"the written package certifies {outcome.local_report.status}: "
                              f"its artifacts are uploaded, its manifest was not published")
            return outcome
    if not _publish_manifest(written, request, publisher, result,
                             delete_after_upload=delete_after_upload):
        return outcome
    if not _certify_published_commit(written, publisher, outcome, say,
                                     delete_after_upload=delete_after_upload):
        return outcome
    if request.sign is not None and not commit_attestation(
            request.sign, hub, result, publisher.upload.revision, say):
        return outcome
    if request.catalog is not None:
        list_in_catalog(request, hub, result, written.manifest, say)
    return outcome


def _write_uploading(write_request: WriteRequest, publisher: StreamingPublisher,
                     result: PublishResult, progress: WriteProgress | None, *,
                     delete_after_upload: bool) -> WriteResult | None:
    """The package written, each artifact uploaded as soon as it is written and verified; None
    (`result` says why) when the upload could not start or stopped."""
    from meshcert.writer.publication_gate import refuse_unpublishable
    from meshcert.writer.write import prepare, write

    write_request.sink = publisher
    if delete_after_upload:
        write_request.sink_disk_bytes = lambda plan: streaming_disk_bytes(plan, ROOM)
    prepared = prepare(write_request)
    try:
        refuse_unpublishable(prepared)  # mesh-llm's HF job's rules (§6.1), before any upload
        try:
            publisher.start()
        except HubError as exc:
            result.status, result.message = hub_status(exc), exc.message
            return None
        try:
            return write(prepared, progress)
        except UploadStopped as exc:
            error = publisher.failure
            result.status = hub_status(error) if isinstance(error, HubError) else "failed"
            result.message = f"{exc}; no manifest was published (a re-run resumes)"
            return None
    finally:
        prepared.source.close()
        publisher.close()


def _publish_manifest(written: WriteResult, request: PublishRequest,
                      publisher: StreamingPublisher, result: PublishResult, *,
                      delete_after_upload: bool) -> bool:
    """`model-package.json` and the model card, last, in one commit; False (`result` says why)
    when that commit was not made."""
    manifest_raw = (written.root / "model-package.json").read_bytes()
    checked = written.prepared.source_check
    card = render_card(written.manifest, manifest_sha256=written.manifest_sha256,
                       target=request.target, experimental=request.experimental,
                       identity=None if checked is None else (checked.outcome, checked.detail))
    try:
        try:
            result.commit = publisher.finish(manifest_raw, card.encode())
        except BaseException:
            if delete_after_upload:  # its artifacts are gone from here: no local package
                (written.root / "model-package.json").unlink(missing_ok=True)
            raise
    except (PublishRefused, Failed) as exc:
        result.status, result.message = "failed", f"{exc}; no manifest was published"
        return False
    except HubError as exc:
        result.status = hub_status(exc)
        result.message = (f"{exc.message}; no manifest was published" + (
            " (a re-run with --resume continues)" if delete_after_upload else
            f": the package is written in {written.root}; finish with `meshcert package "
            f"publish {written.root} --target {request.target}` (what is uploaded is kept)"))
        return False
    return True


def _certify_published_commit(written: WriteResult, publisher: StreamingPublisher,
                              outcome: WritePublishOutcome, say: Progress, *,
                              delete_after_upload: bool) -> bool:
    """The published commit certified; when that fails after a deleting write, the manifest
    withdrawn again in a further commit. False when it did not pass."""
    from meshcert.writer.facts import source_facts

    result = outcome.publish
    facts = source_facts(written.plan, written.state, written.prepared.source_ref)
    passed = certify_published(result, say, source_gguf=written.prepared.source_ref,
                               source_facts=facts)
    if not passed and delete_after_upload and result.status == "failed":
        try:
            outcome.withdrawn_commit = publisher.upload.withdraw(
                "its published certification failed")
            result.message += "; the manifest was withdrawn again"
        except (HubError, PublishRefused, Failed) as exc:
            result.message += f"; withdrawing the manifest failed: {exc}"
    return passed
