"""Build a PackageView from a local package directory (all disk I/O lives here)."""

from __future__ import annotations

import hashlib
import os
import stat
import threading
from collections.abc import Callable
from dataclasses import replace

from meshcert.certify.formats.v2_layout import PUBLISHER_ROLE
from meshcert.certify.manifest_parse import (
    MANIFEST_NAME,
    MAX_MANIFEST_BYTES,
    ParsedManifest,
    parse_manifest,
)
from meshcert.certify.paths import unsafe_path_reason
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.view import (
    MAX_PUBLISHER_FILE_BYTES,
    CertOptions,
    PackageView,
    SmallFile,
)
from meshcert.core.byte_source import LocalFileSource
from meshcert.core.file_facts import FileFact
from meshcert.core.findings import finding
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem
from meshcert.core.gguf.reader import read_header_file
from meshcert.core.gguf.tensor_digests import (
    FragmentDigests,
    digest_metadata_tensors,
    metadata_role_tensors,
)
from meshcert.core.hashing import HashingInterrupted, VerifyCache, hash_files
from meshcert.core.progress import NullProgress, ProgressObserver

README_NAME = "README.md"
MAX_README_BYTES = 4 * 1024 * 1024
MAX_LISTING = 200_000


def _read_capped(path: str, cap: int) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(cap + 1)


def inspect_path(root: str, rel: str) -> FileFact:
    """Classify one declared path without following links out of the package."""
    full = os.path.join(root, *rel.split("/"))
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return FileFact(rel, "missing")
    except NotADirectoryError:
        return FileFact(rel, "missing", detail="a parent component is not a directory")
    except OSError as exc:
        return FileFact(rel, "unreadable", detail=str(exc.strerror or exc))
    real_root = os.path.realpath(root)
    real = os.path.realpath(full)
    if os.path.commonpath([real_root, real]) != real_root:
        return FileFact(rel, "link_outside", detail=f"resolves to {real}, outside the package")
    if stat.S_ISLNK(st.st_mode):
        try:
            st = os.stat(full)
        except OSError:
            return FileFact(rel, "missing", detail="dangling symbolic link")
    if stat.S_ISDIR(st.st_mode):
        return FileFact(rel, "directory")
    if not stat.S_ISREG(st.st_mode):
        return FileFact(rel, "special", detail="not a regular file (FIFO, socket or device)")
    return FileFact(rel, "file", size=st.st_size, hard_links=st.st_nlink)


def list_package_files(root: str) -> list[str]:
    """Relative posix paths of every regular file (links not followed), bounded."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if d not in {".git", ".cache"})
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(filenames):
            rel = name if rel_dir == "." else f"{rel_dir.replace(os.sep, '/')}/{name}"
            out.append(rel)
            if len(out) >= MAX_LISTING:
                return out
    return out


def read_manifest(root: str) -> tuple[bytes | None, ParsedManifest]:
    """Read and parse model-package.json, refusing to load one over 16 MiB."""
    manifest_path = os.path.join(root, MANIFEST_NAME)
    fact = inspect_path(root, MANIFEST_NAME)
    if fact.kind == "missing":
        return None, parse_manifest(None)
    if fact.kind != "file":  # never follow the manifest out of the package, nor block on a FIFO
        return None, ParsedManifest(None, [finding(
            "artifact_not_file", f"{MANIFEST_NAME} is not a regular file inside the package"
            f"{': ' + fact.detail if fact.detail else ''}", path=MANIFEST_NAME)])
    try:
        size = os.path.getsize(manifest_path)
        if size > MAX_MANIFEST_BYTES:
            return None, ParsedManifest(None, [finding(
                "manifest_too_large", f"{MANIFEST_NAME} is {size} bytes, over the 16 MiB limit",
                path=MANIFEST_NAME)])
        raw = _read_capped(manifest_path, MAX_MANIFEST_BYTES)
    except OSError as exc:
        return None, ParsedManifest(None, [finding(
            "invalid_manifest_json", f"{MANIFEST_NAME} could not be read: {exc.strerror}",
            path=MANIFEST_NAME)])
    return raw, parse_manifest(raw)


def load_local_package(
    directory: str,
    *,
    display_ref: str,
    options: CertOptions,
    progress: ProgressObserver | None = None,
    verify_cache: str | None = None,
    verify_cache_lookups: bool = True,
    on_headers: Callable[[PackageView], None] | None = None,
    on_files: Callable[[PackageView, list[str]], None] | None = None,
) -> PackageView:
    """Gather manifest, file facts (sizes, SHA-256), listing, README and GGUF headers.

    With `--verify-sha256` the files are hashed (on every core, in this thread's pool) while a
    second thread reads the headers and the small files and then calls `on_headers(view)` (the
    service starts asking the worker processes then and imports the checks): that fixed work
    overlaps the hashing instead of preceding it. Without hashing they run in this thread.
    The view's `files` gain their digests once hashing is done. `on_files(view, paths)` is
    called first, once the file facts are known, with the GGUFs whose headers will be read.
    `verify_cache_lookups=False`: the cache is written, never read (every digest hashed here).
    """
    root = os.path.abspath(directory)
    ref = RefInfo(kind="local", pinned=False)
    if not os.path.isdir(root):
        return PackageView(
            ref=ref, display_ref=display_ref, local_dir=None, manifest_raw=None,
            parsed=ParsedManifest(None), options=options,
            source_findings=[finding(
                "invalid_package_ref",
                f"{display_ref!r} is not a directory holding {MANIFEST_NAME}")])
    raw, parsed = read_manifest(root)
    view = PackageView(
        ref=ref, display_ref=display_ref, local_dir=root, manifest_raw=raw, parsed=parsed,
        options=options, verification="local-sha256" if options.verify_sha256 else "size-only",
    )
    view.files = _file_facts(view, root)
    view.listing = list_package_files(root)
    if on_files is not None:
        on_files(view, gguf_header_paths(view))

    def read_the_rest() -> None:
        readme = os.path.join(root, README_NAME)
        if inspect_path(root, README_NAME).kind == "file":
            data = _read_capped(readme, MAX_README_BYTES)
            view.readme_raw = data[:MAX_README_BYTES]
            view.readme_text = view.readme_raw.decode("utf-8", errors="replace")
        view.headers = read_local_headers(root, view)
        view.tensor_digests = read_metadata_tensor_digests(root, view)
        view.publisher_files = read_local_publisher_files(root, view)
        if on_headers is not None:
            on_headers(view)

    if not view.options.verify_sha256:
        read_the_rest()
        return view
    # Ctrl-C reaches this (the main) thread, so the hashing stays here, where it is turned
    # into an interrupted verification; the other thread only reads small things and ends
    beside = _Beside(read_the_rest)
    try:
        cache = _cache(view, verify_cache, verify_cache_lookups)
        hashed = _hashed(view, root, progress or NullProgress(), cache)
    finally:
        beside.join()
    view.files = hashed  # every file keeps its kind and size: only the digests are added
    return view


class _Beside:
    """`work()` on its own thread; `join()` waits and re-raises what it raised."""

    def __init__(self, work: Callable[[], None]) -> None:
        self._failure: BaseException | None = None

        def run() -> None:
            try:
                work()
            except BaseException as exc:  # handed to join(), in the caller's thread
                self._failure = exc

        self._thread = threading.Thread(target=run, name="package-facts", daemon=True)
        self._thread.start()

    def join(self) -> None:
        while self._thread.is_alive():
            self._thread.join(0.2)  # a short wait keeps Ctrl-C deliverable
        if self._failure is not None:
            raise self._failure


def _file_facts(view: PackageView, root: str) -> dict[str, FileFact]:
    facts: dict[str, FileFact] = {}
    for artifact in view.artifacts():
        path = artifact.path  # a slice (--layers/--stage) stats and hashes only its parts
        if unsafe_path_reason(path) is None and path not in facts and view.selected(path):
            facts[path] = inspect_path(root, path)
    return facts


def _cache(view: PackageView, path: str | None, lookups: bool) -> VerifyCache | None:
    """The --verify-cache, tied to this package (its manifest's SHA-256); why a part of it
    was not used is a warning of the report."""
    if not path:
        return None
    package = hashlib.sha256(view.manifest_raw).hexdigest() if view.manifest_raw else ""
    cache = VerifyCache(path, package=package, lookups=lookups)
    for problem in cache.problems:
        view.source_findings.append(finding("verify_cache_rejected", f"--verify-cache {problem}"))
    return cache


def _hashed(view: PackageView, root: str, progress: ProgressObserver,
            cache: VerifyCache | None) -> dict[str, FileFact]:
    """`view.files` with the SHA-256 of every regular file the run hashes (all of them, or with
    --hash-once the slice's share): a new dict, as the worker threads may be reading the old one."""
    facts = dict(view.files)
    selection = view.selection()
    regular = {rel: os.path.join(root, *rel.split("/"))
               for rel, fact in facts.items() if fact.kind == "file" and selection.hashes(rel)}
    try:
        results = hash_files(regular.values(), progress=progress, cache=cache)
        interrupted = False
    except HashingInterrupted as stop:
        results, interrupted = stop.results, True
    unverified = 0
    for rel, full in regular.items():
        result = results.get(full)
        if result is None or result.error == "interrupted":
            unverified += 1  # left unverified: neither a pass nor a mismatch
        else:
            facts[rel] = replace(facts[rel], sha256=result.sha256,
                                 sha256_error=result.error, hash_cached=result.cached)
    if interrupted:
        view.source_incomplete = True
        view.source_findings.append(finding(
            "check_not_run", f"SHA-256 verification was interrupted: {unverified} of "
            f"{len(regular)} artifacts were not verified"))
    return facts


def read_local_headers(root: str, view: PackageView) -> dict[str, GGUFHeader | HeaderProblem]:
    """GGUF headers of every declared .gguf artifact that is a regular file (v2 publisher
    artifacts aside: they are never GGUFs, whatever their name).

    Header reads touch only the first bytes of each file (meshcert.core.gguf.reader); a file that
    is not a GGUF, or is cut short, yields a HeaderProblem for the structure checks to report.
    """
    return {rel: read_header_file(os.path.join(root, *rel.split("/")))
            for rel in gguf_header_paths(view)}


def gguf_header_paths(view: PackageView) -> list[str]:
    """Declared .gguf artifacts that are regular files, v2 publisher artifacts left out: the
    ones whose GGUF headers a source reads."""
    publisher = {e.path for e in view.artifacts() if e.role == PUBLISHER_ROLE}
    return [rel for rel, fact in view.files.items()
            if fact.kind == "file" and rel.lower().endswith(".gguf") and rel not in publisher]


def publisher_read_paths(view: PackageView) -> list[str]:
    """Publisher artifacts of the slice that are regular files: the ones read whole."""
    return [path for path in view.publisher_artifact_paths()
            if (fact := view.files.get(path)) is not None and fact.kind == "file"]


def read_local_publisher_files(root: str, view: PackageView) -> dict[str, SmallFile]:
    """Each publisher file whole, at most MAX_PUBLISHER_FILE_BYTES (a larger one is kept as its
    size only); an unreadable one is left out (the artifact checks report it)."""
    out: dict[str, SmallFile] = {}
    for rel in publisher_read_paths(view):
        try:
            data = _read_capped(os.path.join(root, *rel.split("/")), MAX_PUBLISHER_FILE_BYTES)
        except OSError:
            continue
        if len(data) > MAX_PUBLISHER_FILE_BYTES:
            size = view.files[rel].size
            out[rel] = SmallFile(rel, None, size if size is not None else len(data))
        else:
            out[rel] = SmallFile(rel, data, len(data))
    return out


def metadata_digest_paths(view: PackageView) -> list[str]:
    """v1 fragments (projectors aside) whose header lists metadata-role tensors: the ones the
    copies check compares (a v2 payload holds each tensor once)."""
    if view.package_format == "v2":
        return []
    out: list[str] = []
    for artifact in view.artifacts():
        path = artifact.path
        header = view.headers.get(path) if isinstance(path, str) else None
        if (artifact.role != "projector" and isinstance(header, GGUFHeader)
                and path not in out and metadata_role_tensors(header)):
            out.append(path)
    return out


def read_metadata_tensor_digests(root: str, view: PackageView) -> dict[str, FragmentDigests]:
    """Hash the (small) metadata-role tensors of every v1 fragment that has some."""
    out: dict[str, FragmentDigests] = {}
    for rel in metadata_digest_paths(view):
        header = view.headers[rel]
        assert isinstance(header, GGUFHeader)
        try:
            source = LocalFileSource(os.path.join(root, *rel.split("/")))
        except OSError as exc:
            why = f"cannot open the file: {exc.strerror or exc}"
            out[rel] = FragmentDigests(unread={t.name: why for t in metadata_role_tensors(header)})
            continue
        out[rel] = digest_metadata_tensors(source, header)
    return out
