"""`package publish`: a locally certified package onto the Hub, pinned and certified there.

1. Certify DIR (package-only, every artifact hashed): anything but `passed` is refused before
   a byte is sent. The digests that certification computed are the ones uploaded with (no
   second hashing); every file's stat is taken before certifying and checked again before its
   upload, so a file changed in between is never sent under a stale digest.
2. Upload with huggingface_hub over plain LFS (meshcert.publish.hub_writer): artifacts in batched
   commits (meshcert.publish.plan's limits), each batch re-planned against the target's listing on
   every attempt, so files already there with the same sha256 are skipped and a re-run after a
   failure resumes without re-uploading; 429/5xx/dropped connections are retried with backoff
   (Retry-After honoured). A manifest already on the target that differs from this one is deleted by
   the first commit that changes an artifact, and the new `model-package.json` comes in the LAST
   commit, with the model card (meshcert.writer.card) and the removal of stale GGUF files: no
   commit shows a manifest whose artifacts are not all there.
3. Certify `hf://target@<commit>` package-only.
4. With a catalog, and only for a package that passed step 3: the catalog entry with the
   package pinned (meshcert.publish.catalog), committed to the catalog's main branch, or opened as a
   pull request when `experimental` or when the token cannot push there.

Statuses: published (certified at its pinned commit), failed (the remote certification failed,
or the Hub refused the upload for good), refused (nothing was sent: DIR did not certify
`passed`, or the request cannot be honoured), incomplete (the Hub could not be reached or kept
failing; a re-run resumes).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
from typing import TYPE_CHECKING, Any

from meshcert.core.errors import Refused
from meshcert.core.hub.errors import RETRYABLE_STATUS, HubError
from meshcert.core.hub.settings import HubSettings
from meshcert.publish import catalog as catalog_entry
from meshcert.publish.attestation import commit_attestation
from meshcert.publish.hub_writer import Addition, HubWriter, StopRetrying, xet_refusal
from meshcert.publish.plan import (
    MANIFEST,
    MAX_FILE_BYTES,
    README,
    LocalFile,
    batches,
    local_file,
    missing,
    same_bytes,
    stale,
    stat_key,
)
from meshcert.publish.requests import (
    CatalogOutcome,
    Progress,
    PublishRequest,
    PublishResult,
    PublishStatus,
)
from meshcert.writer.card import render_card

if TYPE_CHECKING:
    pass

REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*$")
BRANCH = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]*$")


class PublishRefused(Refused, StopRetrying):
    """The request cannot be honoured; nothing was (or will be) uploaded. A refusal that also
    ends a retried Hub call at once."""


class Failed(StopRetrying):
    """The Hub's state forbids going on (a definite answer, not an outage)."""


def refusal(request: PublishRequest) -> str | None:
    """What is wrong with the request itself, if anything (checked before certifying)."""
    problem = refusal_of_target(request)
    if problem is not None:
        return problem
    if not os.path.isfile(os.path.join(request.package_dir, MANIFEST)):
        return f"{request.package_dir!r} is not a package directory (no {MANIFEST})"
    from meshcert.publish.publication_gate import publication_refusal

    return publication_refusal(request.package_dir)


def refusal_of_target(request: PublishRequest) -> str | None:
    """What is wrong with where and how to publish (no package needed yet)."""
    if not REPO_ID.match(request.target):
        return f"--target {request.target!r} is not a repo id (namespace/name)"
    if request.catalog is not None and not REPO_ID.match(request.catalog):
        return f"--catalog {request.catalog!r} is not a repo id (namespace/name)"
    if request.branch is not None and (not BRANCH.match(request.branch)
                                       or request.branch.startswith("refs/")):
        return f"--branch {request.branch!r} is not a branch name"
    if request.max_files_per_commit <= 0 or request.max_bytes_per_commit <= 0:
        return "batch limits must be positive"
    return xet_refusal()


def publish_package(request: PublishRequest, *, writer: HubWriter | None = None,
                    progress: Progress | None = None) -> PublishResult:
    """Publish, certify the published commit, and list it in the catalog. Never raises for
    anything the package, the Hub or the network can do."""
    say = progress or (lambda _message: None)
    result = PublishResult("refused", "", request.target)
    problem = refusal(request)
    if problem is not None:
        result.message = problem
        return result
    hub = writer or HubWriter(endpoint=HubSettings.from_env().endpoint, token=request.token)
    try:
        check_access(request, hub, say)
        files, manifest_raw, manifest = _certified(request, result, say)
    except PublishRefused as exc:
        result.message = str(exc)
        return result
    except Refused as exc:
        result.message = f"{exc.message}: nothing certified or uploaded"
        return result
    said = result.local_report.source_model if result.local_report is not None else None
    card = render_card(manifest, manifest_sha256=hashlib.sha256(manifest_raw).hexdigest(),
                       target=request.target, experimental=request.experimental,
                       identity=(said.identity, said.identity_detail)
                       if said is not None and said.identity is not None else None)
    upload = Upload(request, hub, result, say)
    try:
        result.commit = upload.run(files, manifest_raw, card.encode(), manifest)
    except PublishRefused as exc:
        result.status, result.message = "failed", str(exc)
        return result
    except Failed as exc:
        result.status, result.message = "failed", str(exc)
        return result
    except HubError as exc:
        result.status, result.message = hub_status(exc), exc.message
        return result
    if not certify_published(result, say):
        return result
    if request.sign is not None and not commit_attestation(request.sign, hub, result,
                                                           upload.revision, say):
        return result
    if request.catalog is not None:
        list_in_catalog(request, hub, result, manifest, say)
    return result


def check_access(request: PublishRequest, hub: HubWriter, say: Progress) -> None:
    """Refused unless the token may write the target (or open a pull request on it):
    asked before the package is hashed or certified."""
    say(f"checking the token and the right to write {request.target}")
    user = hub.check_access(request.target, pull_request=request.create_pr)
    say(f"token of {user!r} may write {request.target}")


def hub_status(error: HubError) -> PublishStatus:
    """An outage (no answer, 429, 5xx) leaves the publish incomplete; a definite refusal fails
    it."""
    return "incomplete" if error.status is None or error.status in RETRYABLE_STATUS else "failed"


def _stats(root: str) -> dict[str, tuple[int, int, int, int]]:
    out: dict[str, tuple[int, int, int, int]] = {}
    for base, _dirs, names in os.walk(root):
        for name in names:
            path = os.path.join(base, name)
            try:
                out[os.path.relpath(path, root).replace(os.sep, "/")] = stat_key(path)
            except OSError:
                continue
    return out


def _certified(request: PublishRequest, result: PublishResult, say: Progress
               ) -> tuple[list[LocalFile], bytes, dict[str, Any]]:
    """Certify DIR; the artifacts to upload with their certified digests, and the manifest."""
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.view import CertOptions

    root = os.path.abspath(request.package_dir)
    before = _stats(root)
    say(f"certifying {request.package_dir} (package-only, every artifact hashed)")
    report = certify_package(CertRequest(model=root, options=CertOptions(
        verify_sha256=True, source_identity=True), verify_cache=request.verify_cache))
    result.local_report = report
    false_source = [f.message for f in report.findings
                    if f.code == "source_identity_mismatch" and f.check == "source_identity"]
    if false_source:
        raise PublishRefused(f"the source identity {request.package_dir} records is not what "
                             f"the Hub holds: {'; '.join(false_source)}: nothing uploaded")
    if report.status != "passed":
        errors = sorted({f.code for f in report.findings if f.severity == "error"})
        raise PublishRefused(
            f"{request.package_dir} does not certify passed ({report.status}"
            + (f": {', '.join(errors)}" if errors else "") + "): nothing uploaded")
    with open(os.path.join(root, MANIFEST), "rb") as handle:
        manifest_raw = handle.read()
    if hashlib.sha256(manifest_raw).hexdigest() != report.manifest_sha256:
        raise PublishRefused(f"{MANIFEST} changed while it was certified: nothing uploaded")
    manifest = json.loads(manifest_raw)
    if request.catalog is not None and catalog_entry.source_of(manifest) is None:
        raise PublishRefused("--catalog needs the manifest's source_model.repo (the catalog "
                             "files a package under its source repo): nothing uploaded")
    files: list[LocalFile] = []
    for path in report.declared_artifacts:
        local = os.path.join(root, path)
        digest = report.digests.get(path)
        key = before.get(path)
        if digest is None or key is None or stat_key(local) != key:
            raise PublishRefused(f"{path} changed while the package was certified: nothing "
                                 "uploaded")
        if key[0] > MAX_FILE_BYTES:
            raise PublishRefused(f"{path} is {key[0]} bytes, over the Hub's "
                                 f"{MAX_FILE_BYTES}-byte limit per file: nothing uploaded")
        files.append(local_file(path, local, key[0], digest, key))
    return files, manifest_raw, manifest


class Upload:
    """The commits of one publish, against one revision (a branch, or the pull request the
    first commit opens)."""

    def __init__(self, request: PublishRequest, hub: HubWriter, result: PublishResult,
                 say: Progress) -> None:
        self.request, self.hub, self.result, self.say = request, hub, result, say
        self.base = request.branch or "main"
        self.revision = self.base
        self.open_pr = request.create_pr  # the next commit opens the pull request
        self.message = request.commit_message or "Publish layer package"

    def begin(self) -> None:
        """The target repo (and branch) exist afterwards."""
        target = self.request.target
        self.say(f"target {target} ({'private' if self.request.private else 'public'}), "
                 f"revision {self.base}")
        self.hub.ensure_repo(target, private=self.request.private)
        if self.base != "main":
            self.hub.ensure_branch(target, self.base)

    def upload(self, group: list[LocalFile], label: str, manifest_raw: bytes | None) -> None:
        """One batch of artifacts in one commit, re-planned against the target on every
        attempt (`manifest_raw` None: a manifest already there is replaced whatever it holds,
        as a package being streamed has none yet)."""
        self.hub.retry(f"commit {label}", functools.partial(
            self._artifacts, group, label, manifest_raw))

    def finish(self, files: list[LocalFile], manifest_raw: bytes, card: bytes) -> str:
        """The manifest and model card, last; the commit they are in."""
        target = self.request.target
        self.hub.retry("commit manifest", lambda: self._final(files, manifest_raw, card))
        if self.open_pr:  # nothing changed anywhere: there was no commit to open it with
            raise Failed(f"--create-pr: {target}@{self.base} already holds this package; no "
                          "pull request was opened")
        head = self.hub.head(target, self.revision)
        if head is None:
            raise Failed(f"{target}@{self.revision} vanished during the publish")
        return head

    def withdraw(self, reason: str) -> str:
        """Remove the manifest again (its published certification failed): the artifacts
        stay, no package is advertised at the branch head."""
        self._commit([], [MANIFEST], f"Withdraw the layer package: {reason}")
        head = self.hub.head(self.request.target, self.revision)
        return head or ""

    def run(self, files: list[LocalFile], manifest_raw: bytes, card: bytes,
            manifest: dict[str, Any]) -> str:
        self.begin()
        groups = batches(files, self.request.max_files_per_commit,
                         self.request.max_bytes_per_commit)
        for i, group in enumerate(groups, 1):
            self.upload(group, f"artifacts {i}/{len(groups)}", manifest_raw)
        return self.finish(files, manifest_raw, card)

    def _commit(self, additions: list[Addition], deletions: list[str], message: str) -> None:
        parent = None if self.open_pr else self.hub.head(self.request.target, self.revision)
        try:
            done = self.hub.commit(self.request.target, additions=additions,
                                   deletions=deletions, message=message,
                                   description="Published by meshcert: the package certified "
                                   "passed before upload.", revision=self.revision,
                                   create_pr=self.open_pr, parent=parent)
        except Exception as exc:
            error = self.hub.classify(exc, message)
            if error.status == 412:  # somebody committed meanwhile: re-plan and try again
                error.retryable = True
            raise error from None
        self.result.commits.append(done.oid)
        if self.open_pr:
            self.open_pr = False
            self.revision = done.pr_revision or self.revision
            self.result.pull_request_url = done.pr_url

    def _artifacts(self, group: list[LocalFile], label: str, manifest_raw: bytes | None
                   ) -> None:
        remote = self.hub.listing(self.request.target, self.revision)
        todo = missing(group, remote)
        already = [f.path for f in group if f not in todo and f.path not in self.result.skipped]
        self.result.skipped += already
        if already:
            self.say(f"{label}: {len(already)} file(s) already on the target, skipped")
        if not todo:
            return
        for item in todo:
            if stat_key(item.local_path) != item.stat_key:
                raise PublishRefused(f"{item.path} changed after it was certified: upload "
                                     "stopped")
        old = remote.get(MANIFEST)
        deletions = [MANIFEST] if old is not None and (
            manifest_raw is None or not same_bytes(manifest_raw, old)) else []
        self.say(f"{label}: uploading {len(todo)} file(s), {sum(f.size for f in todo):,} "
                 "bytes")
        self._commit([(f.path, f) for f in todo], deletions, f"{self.message} ({label})")
        self.result.uploaded += [f.path for f in todo]
        for item in todo:
            self.say(f"  uploaded {item.path} ({item.size:,} bytes)")
        self.say(f"{label}: committed {self.result.commits[-1][:12]}")

    def _final(self, files: list[LocalFile], manifest_raw: bytes, card: bytes) -> None:
        remote = self.hub.listing(self.request.target, self.revision)
        absent = missing(files, remote)
        if absent:
            raise Failed(f"{len(absent)} artifact(s) are not on the target after upload "
                          f"(first: {absent[0].path}): the manifest was not committed")
        additions: list[Addition] = [(path, data) for path, data in
                                     ((README, card), (MANIFEST, manifest_raw))
                                     if not same_bytes(data, remote.get(path))]
        deletions = stale(remote, [f.path for f in files])
        if not additions and not deletions:
            self.say("manifest and model card already on the target")
            return
        self.say("committing the manifest and the model card"
                 + (f", removing {len(deletions)} stale file(s)" if deletions else ""))
        self._commit(additions, deletions, f"{self.message} (manifest and model card)")
        self.say(f"manifest and model card: committed {self.result.commits[-1][:12]}")


def certify_published(result: PublishResult, say: Progress, **request: Any) -> bool:
    from meshcert.certify.service import CertRequest, certify_package

    ref = result.certified_ref
    assert ref is not None
    say(f"certifying {ref} (package-only)")
    report = certify_package(CertRequest(model=ref, **request))
    result.remote_report = report
    if report.status == "passed":
        result.status, result.message = "published", f"published and certified: {ref}"
        return True
    result.status = "failed" if report.status == "failed" else "incomplete"
    result.message = f"published at {ref}, but its certification is {report.status}"
    return False


def list_in_catalog(request: PublishRequest, hub: HubWriter, result: PublishResult,
                     manifest: dict[str, Any], say: Progress) -> None:
    assert request.catalog is not None and result.commit is not None
    # pinned where the attestation is, when one was committed (its artifacts are the same)
    pinned = result.pinned
    assert pinned is not None
    source = catalog_entry.source_of(manifest)
    assert source is not None  # checked before uploading
    path = catalog_entry.entry_path(source)
    try:
        existing = hub.read(request.catalog, path, "main", repo_type="dataset")
        entry = catalog_entry.updated_entry(existing, manifest, target=request.target,
                                            commit=pinned,
                                            experimental=request.experimental)
        if request.experimental:
            as_pr, reason = True, "--experimental: proposed, not merged"
        elif not hub.can_write(request.catalog, repo_type="dataset"):
            as_pr, reason = True, "this token cannot push to the catalog"
        else:
            as_pr, reason = False, "committed to the catalog's main branch"
        say(f"catalog {request.catalog}: {path} ({'pull request' if as_pr else 'commit'})")
        message = f"Add layer package {request.target}@{pinned[:12]}"
        data = catalog_entry.entry_bytes(entry)
        done = hub.retry(f"catalog {request.catalog}", lambda: hub.commit(
            request.catalog or "", additions=[(path, data)], message=message,
            description=f"Package {request.target} pinned at {pinned}, certified passed "
            "by meshcert.", revision="main", create_pr=as_pr, repo_type="dataset"))
    except catalog_entry.CatalogError as exc:
        result.status, result.message = "incomplete", f"{result.message}; catalog: {exc}"
        return
    except HubError as exc:
        result.status = "incomplete"
        result.message = f"{result.message}; catalog not updated: {exc.message}"
        return
    result.catalog = CatalogOutcome(request.catalog, path, done.oid, done.pr_url, reason)
