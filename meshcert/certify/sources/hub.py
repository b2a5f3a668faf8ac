"""Build a PackageView from a published hf:// ref, without downloading the package.

One `model_info(files_metadata=True)` resolves the ref to a commit and lists every file with
its size and LFS sha256; every later request uses that commit. The manifest and README are
downloaded (small); GGUF headers are read with HTTP ranges; artifact content is streamed and
hashed only with --verify-sha256. A slice (--layers/--stage) reads headers of, and streams,
only its own parts. The number of requests does not grow with the number of
layers except for the header reads, which are per fragment by nature.

Every Hub failure becomes a finding (hub_repo_not_found, hub_gated, hub_unreachable, ...);
an unreachable Hub marks the view incomplete, so the result is never "passed".
"""

from __future__ import annotations

import hashlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial

from meshcert.certify.manifest_parse import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    ParsedManifest,
    parse_manifest,
)
from meshcert.certify.paths import unsafe_path_reason
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.sources.local import (
    MAX_README_BYTES,
    README_NAME,
    gguf_header_paths,
    metadata_digest_paths,
    publisher_read_paths,
)
from meshcert.certify.view import MAX_PUBLISHER_FILE_BYTES, CertOptions, PackageView, SmallFile
from meshcert.core.byte_source import TailCache
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem
from meshcert.core.gguf.reader import read_header
from meshcert.core.gguf.tensor_digests import (
    FragmentDigests,
    digest_metadata_tensors,
    metadata_role_tensors,
)
from meshcert.core.git_blob import git_blob_id
from meshcert.core.hub.api import HubApi
from meshcert.core.hub.errors import HubError, Redactor
from meshcert.core.hub.files import HubFiles, new_client
from meshcert.core.hub.gate import RequestGate
from meshcert.core.hub.listing import LFS_SIZES_FACT, RemoteFile, directories, fact_for
from meshcert.core.hub.range_source import HubRangeSource
from meshcert.core.hub.revision import RevisionClass, classify_revision
from meshcert.core.hub.settings import HubSettings
from meshcert.core.hub.stats import TransferCounter
from meshcert.core.hub.verify import StreamInterrupted, stream_hashes
from meshcert.core.progress import NullProgress, ProgressObserver
from meshcert.core.refs import PackageRef


def _token() -> str | None:
    try:
        from huggingface_hub.utils import get_token

        return get_token()
    except Exception:  # no token store, unreadable file: nothing to redact
        return None


def load_hub_package(ref: PackageRef, *, options: CertOptions,
                     progress: ProgressObserver | None = None,
                     settings: HubSettings | None = None,
                     gate: RequestGate | None = None) -> PackageView:
    """Gather manifest, file facts, listing, README and GGUF headers of an hf:// package.

    `gate` caps the requests in flight (and carries 429 holds) across several runs that share
    it, e.g. the packages of one catalog; by default each run has its own."""
    settings = settings or HubSettings.from_env()
    progress = progress or NullProgress()
    counter = TransferCounter()
    redact = Redactor([_token()])
    repo = ref.repo or ""
    view = PackageView(
        ref=RefInfo(kind="hf", repo=repo, requested_revision=ref.revision, pinned=False),
        display_ref=ref.text, local_dir=None, manifest_raw=None, parsed=ParsedManifest(None),
        options=options,
        verification="sha256-streamed" if options.verify_sha256 else "hub-attested")
    files: HubFiles | None = None
    side = ThreadPoolExecutor(max_workers=2, thread_name_prefix="hub-side")
    own_gate = gate is None
    if gate is None:
        gate = RequestGate(settings.max_parallel_requests)  # one cap for every request of the run
    client = side.submit(new_client, settings)  # built while model_info is in flight
    try:
        api = HubApi(settings, counter=counter, redact=redact, gate=gate)
        resolved = api.resolve(repo, ref.revision)
        view.ref = RefInfo(kind="hf", repo=repo, requested_revision=ref.revision,
                           resolved_commit=resolved.commit, pinned=False)
        # The refs listing only says whether the revision moves: it runs beside the reads.
        refs = side.submit(api.refs, repo)
        listing = resolved.files if resolved.files is not None else api.tree(repo,
                                                                             resolved.commit)
        files = HubFiles(settings, repo=repo, commit=resolved.commit, counter=counter,
                         redact=redact, gate=gate, client=client.result())
        _fill(view, listing, files, settings, progress)
        revision = classify_revision(ref.revision, resolved.commit, refs.result())
        view.ref = view.ref.model_copy(update={"pinned": revision.pinned})
        if not revision.pinned:  # first, as when the refs were listed before the reads
            view.source_findings.insert(0, _unpinned(repo, resolved.commit, revision,
                                                     options))
    except HubError as err:
        _record_failures(view, [err], what="")
    except Exception as exc:  # a meshcert bug: reported as incomplete, never a traceback
        view.source_findings.append(finding(
            "internal_error", f"loading {ref.text} failed: {type(exc).__name__}: "
            f"{redact(str(exc))[:300]}"))
        view.source_incomplete = True
    finally:
        side.shutdown(wait=True)
        if files is not None:
            files.close()
        elif client.exception() is None:
            client.result().close()
        if own_gate:
            gate.close()
        view.transfer = counter.as_dict()
    return view


def _unpinned(repo: str, commit: str, revision: RevisionClass, options: CertOptions
              ) -> Finding:
    allowed = " (accepted: --allow-unpinned)" if options.allow_unpinned else ""
    return finding(
        "unpinned_revision",
        f"{revision.reason}; it resolved to commit {commit}. Certify the immutable ref "
        f"hf://{repo}@{commit}{allowed}",
        severity="warning" if options.allow_unpinned else None)


def _fill(view: PackageView, listing: list[RemoteFile], files: HubFiles,
          settings: HubSettings, progress: ProgressObserver) -> None:
    by_path = {f.path: f for f in listing}
    view.listing = sorted(by_path)
    view.source_facts[LFS_SIZES_FACT] = {
        p: f.lfs_size for p, f in by_path.items() if f.lfs_size is not None}
    readme = by_path.get(README_NAME)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="hub-readme") as side:
        # the README is fetched while the manifest is (both are fixed paths)
        readme_data = None if readme is None else side.submit(
            files.read_all, README_NAME, MAX_README_BYTES,
            check=lambda got: listed_content_problem(readme, got))
        view.manifest_raw, view.parsed = _manifest(by_path, files)
        if readme_data is not None:
            data = readme_data.result()
            view.readme_raw = data[:MAX_README_BYTES]
            view.readme_text = view.readme_raw.decode("utf-8", errors="replace")
    folders = directories(by_path)
    view.files = {a.path: fact_for(a.path, by_path, folders) for a in view.artifacts()
                  if unsafe_path_reason(a.path) is None and view.selected(a.path)}
    _read_headers(view, files, settings, progress)
    _read_publisher_files(view, by_path, files)
    if view.options.verify_sha256:
        _verify(view, files, settings, progress)


def _manifest(by_path: dict[str, RemoteFile], files: HubFiles
              ) -> tuple[bytes | None, ParsedManifest]:
    """Download and parse model-package.json, refusing one over 16 MiB (the listing says)."""
    entry = by_path.get(MANIFEST_NAME)
    if entry is None:
        return None, parse_manifest(None)
    size = entry.size
    if size is None or size <= MAX_MANIFEST_BYTES:
        raw = files.read_all(MANIFEST_NAME, MAX_MANIFEST_BYTES,
                             check=lambda got: listed_content_problem(entry, got))
        if len(raw) <= MAX_MANIFEST_BYTES:
            return raw, parse_manifest(raw)  # hashed as-is by the engine
        size = len(raw)
    return None, ParsedManifest(None, [finding(
        "manifest_too_large", f"{MANIFEST_NAME} is {size} bytes, over the 16 MiB limit",
        path=MANIFEST_NAME)])


def listed_content_problem(entry: RemoteFile, data: bytes) -> str | None:
    """Why downloaded bytes are not the file the Hub lists (size, LFS sha256 or git blob id).

    hf_hub_download checks only the size; a wrong Content-Length or corrupted storage would
    otherwise hand the checks a different manifest than the one published."""
    if entry.size is not None and len(data) != entry.size:
        return f"received {len(data)} bytes, the Hub lists {entry.size}"
    if entry.lfs_sha256 is not None:
        if hashlib.sha256(data).hexdigest() != entry.lfs_sha256:
            return "the content does not match the Hub's LFS sha256"
    elif entry.blob_id and git_blob_id(data) != entry.blob_id.lower():
        return "the content does not match the Hub's git blob id"
    return None


def header_paths(view: PackageView) -> list[str]:
    """Declared .gguf artifacts the listing has as files (v2 publisher artifacts aside): the
    ones whose headers are read by HTTP ranges."""
    return gguf_header_paths(view)


def _read_headers(view: PackageView, files: HubFiles, settings: HubSettings,
                  progress: ProgressObserver) -> None:
    paths = header_paths(view)

    digests: dict[str, FragmentDigests] = {}
    metadata_copies = view.package_format != "v2"  # v1 copies metadata-role tensors around

    def read(path: str) -> GGUFHeader | HeaderProblem | HubError:
        remote = HubRangeSource(files, path, view.files[path].size)
        source = TailCache(remote)  # the bytes after the header come with its last block
        try:
            header = read_header(source)
            if remote.failure is not None:
                return remote.failure
            if (metadata_copies and isinstance(header, GGUFHeader)
                    and metadata_role_tensors(header)):
                digests[path] = digest_metadata_tensors(source, header,
                                                        errors=(HubError, OSError))
        except HubError as err:
            return err
        finally:
            progress.advance(1)
        return header

    progress.begin("GGUF headers (HTTP ranges)", len(paths))
    try:
        with ThreadPoolExecutor(max_workers=max(1, min(settings.header_workers, len(paths))),
                                thread_name_prefix="hub-header") as pool:
            results = dict(zip(paths, pool.map(read, paths), strict=True))
    finally:
        progress.end()
    failures = [r for r in results.values() if isinstance(r, HubError)]
    view.headers = {p: r for p, r in results.items() if not isinstance(r, HubError)}
    view.tensor_digests = {p: digests[p] for p in metadata_digest_paths(view) if p in digests}
    _record_failures(view, failures, what=f"GGUF header reads ({len(paths)} fragments)")


def _read_publisher_files(view: PackageView, by_path: dict[str, RemoteFile],
                          files: HubFiles) -> None:
    """Download each publisher file whole (they are small), at most MAX_PUBLISHER_FILE_BYTES;
    one the listing says is larger is kept as its size only, never downloaded."""
    failures: list[HubError] = []
    paths = publisher_read_paths(view)
    for path in paths:
        listed = by_path.get(path)
        if listed is None:
            continue
        if listed.size is not None and listed.size > MAX_PUBLISHER_FILE_BYTES:
            view.publisher_files[path] = SmallFile(path, None, listed.size)
            continue
        try:
            data = files.read_all(path, MAX_PUBLISHER_FILE_BYTES,
                                  check=partial(listed_content_problem, listed))
        except HubError as err:
            failures.append(err)
            continue
        if len(data) > MAX_PUBLISHER_FILE_BYTES:
            view.publisher_files[path] = SmallFile(path, None, len(data))
            continue
        view.publisher_files[path] = SmallFile(path, data, len(data))
        # the Hub keeps small files as plain git (no LFS sha256 to attest): the bytes were read
        # whole, so their sha256 is known first-hand and the artifact checks compare it
        if path in view.files:
            view.files[path] = replace(view.files[path],
                                       sha256=hashlib.sha256(data).hexdigest())
    _record_failures(view, failures, what=f"publisher file reads ({len(paths)} files)")


def _verify(view: PackageView, files: HubFiles, settings: HubSettings,
            progress: ProgressObserver) -> None:
    selection = view.selection()  # with --hash-once, only the slice's share
    sizes = {p: f.size for p, f in view.files.items()
             if f.kind == "file" and selection.hashes(p)}
    try:
        results = stream_hashes(files, sizes, workers=settings.stream_workers,
                                progress=progress)
    except StreamInterrupted as stop:
        results = stop.results
        view.source_incomplete = True
        view.source_findings.append(finding(
            "check_not_run", f"SHA-256 verification was interrupted: "
            f"{len(sizes) - sum(1 for r in results.values() if r.sha256)} of {len(sizes)} "
            "artifacts were not verified"))
    failures: list[HubError] = []
    for path, result in results.items():
        if result.sha256 is not None:
            view.files[path] = replace(view.files[path], sha256=result.sha256)
        elif result.error is not None:
            failures.append(result.error)  # left unverified: neither a pass nor a mismatch
    _record_failures(view, failures, what=f"streamed SHA-256 ({len(sizes)} artifacts)")


def _record_failures(view: PackageView, failures: list[HubError], *, what: str) -> None:
    """One finding per failure code (a dying Hub would otherwise give one per fragment)."""
    by_code: dict[str, list[HubError]] = {}
    for err in failures:
        by_code.setdefault(err.code, []).append(err)
    for code, errors in by_code.items():
        first = errors[0]
        message = first.message if not what else (
            f"{what}: {len(errors)} failed; first: {first.message}")
        view.source_findings.append(finding(code, message))
        if first.incomplete:
            view.source_incomplete = True

