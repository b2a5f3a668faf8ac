"""`package write`: refusals first, then the writer's sequence (writer.md, v2 "Sequence").

1. open the source (local file, split set, or Hub files at a resolved commit) and, when asked,
   apply `meshcert models inspect`'s rules to it; plan every artifact; refuse (nothing written)
   an out-dir that holds a manifest, existing artifacts without `--resume`, an artifact path
   that is a source file, too little free disk;
2. stream the source into the payload parts (v1: the fragments), each finished as it completes:
   digest, re-opened header compared with the plan, hook;
3. v2: the carrier, built from the parts' re-opened headers; then the projectors, copied and
   hashed; then the publisher files (`--publisher-metadata`, or picked up at a Hub source's
   revision), copied byte for byte from the bytes read (and checked) before writing began;
   each verified and hooked like the parts;
4. check that no artifact (and no local source file) changed since, then write README.md and,
   last, `model-package.json` (temp file + rename): the manifest marks the package complete.

Certification is the caller's next step (`meshcert.writer.certify_step`), with the digests
gathered here: it hashes nothing again. What keeps that honest, i.e. why a byte that changed on
disk after it was hashed is still caught:

- each artifact's signature (size, mtime_ns, ctime_ns, inode) is taken the moment its last byte
  is written (`Finisher.submit`), before the rest of its digest is read back. Any later write
  to it, by another process or a hook, moves its mtime and ctime (ctime cannot be set back from
  user space), a replacement changes its inode, so step 4 aborts the write (no manifest) and
  the digest cache certification reads (keyed on the same signature) misses and hashes the file
  again;
- a digest is of the bytes handed to the kernel (in file order) or of the bytes read back from
  the file (the rest): either way of what the file held when its signature was taken, or of a
  later change that the signature then shows.

Not caught, as with every check of this kind (git's "racy clean" case): a write by another
process to the same file within the file system's timestamp tick of the writer's own last
write (a few ms), that leaves the size unchanged; and a change below the file system (a disk
that corrupts what it stores). `meshcert models certify --verify-sha256` in a new process, with
no cache, reads every byte back from the disk.

Nothing here prints or exits.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meshcert.core.atomic import write_atomic
from meshcert.core.errors import Refused
from meshcert.core.hub.provenance import SourceCheck
from meshcert.writer.card import render_card
from meshcert.writer.carrier import carrier_artifact, rows_from_headers
from meshcert.writer.errors import Aborted, Interrupted
from meshcert.writer.generation_defaults import read_generation_defaults
from meshcert.writer.hooks import after_artifact_hook
from meshcert.writer.identity_rules import (
    check_model_id,
    check_source_file,
    check_source_flags,
)
from meshcert.writer.manifest import (
    SKIPPY_ABI,
    Identity,
    activation_width,
    build_manifest,
    manifest_bytes,
)
from meshcert.writer.output_rules import check_outputs
from meshcert.writer.plan import (
    DEFAULT_MAX_ARTIFACT_BYTES,
    Format,
    PackagePlan,
    V2Layout,
    plan_package,
)
from meshcert.writer.publisher import combine, plan_publisher, read_local
from meshcert.writer.source import SourceModel, load_local
from meshcert.writer.source_identity import check_after_streaming, check_before_writing
from meshcert.writer.stream import (
    ArtifactSink,
    Finisher,
    NullWriteProgress,
    Signature,
    StreamState,
    Target,
    WriteProgress,
    copy_file,
    signature,
    stream_file,
)

MANIFEST_NAME = "model-package.json"
README_NAME = "README.md"
GENERATOR_VERSION = "meshcert-splitter 0.1.0"
_MARGIN = 1 << 20  # manifest + README + directory entries


def free_disk_bytes(path: str) -> int:
    """Free bytes on the file system holding `path` (or its nearest existing parent)."""
    probe = os.path.abspath(path)
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    return shutil.disk_usage(probe).free


@dataclass
class WriteRequest:
    source: str  # a local GGUF / first shard, or a Hub coordinate
    out_dir: str
    fmt: Format = "v2"
    model_id: str | None = None
    source_repo: str | None = None
    source_revision: str | None = None
    source_file: str | None = None
    projectors: list[str] = field(default_factory=list)
    after_artifact_command: str | None = None
    max_artifact_bytes: int = DEFAULT_MAX_ARTIFACT_BYTES
    resume: bool = False
    inspect: bool = True  # apply `models inspect`'s rules to the source first
    abi_version: str = SKIPPY_ABI
    generator_version: str = GENERATOR_VERSION
    readme: bool = True
    v2_layout: V2Layout = "common"
    free_bytes: Callable[[str], int] = free_disk_bytes
    # where each finished artifact goes next (`--publish`: uploaded as it is written); with a
    # sink that releases files, the disk needed is what `sink_disk_bytes` says, not the package
    sink: ArtifactSink | None = None
    sink_disk_bytes: Callable[[PackagePlan], int] | None = None
    # v2 publisher metadata (meshcert.writer.publisher): files named by the caller, and whether
    # those
    # present at a Hub source's revision are picked up too (--no-publisher-metadata: not)
    publisher_metadata: list[str] = field(default_factory=list)
    pick_up_publisher_metadata: bool = True
    generation_defaults: str | None = None  # a GenerationRequestDefaults JSON file
    report_files: list[str] = field(default_factory=list)  # written after certification


@dataclass
class Prepared:
    """Everything decided before the first byte is written."""

    request: WriteRequest
    source: SourceModel
    plan: PackagePlan
    identity: Identity
    root: Path
    existing: list[str]  # planned artifact paths already present (--resume re-verifies them)
    source_ref: str  # what certification's --source names (a local path or an hf:// URL)
    # the recorded source identity as the Hub answered it before writing (None: no source
    # repo recorded); completed with the source's SHA-256 once it is streamed
    source_check: SourceCheck | None = None


@dataclass
class WriteResult:
    prepared: Prepared
    state: StreamState
    manifest: dict[str, Any]  # the JSON document written as model-package.json
    manifest_sha256: str
    card: str | None

    @property
    def root(self) -> Path:
        return self.prepared.root

    @property
    def plan(self) -> PackagePlan:
        return self.prepared.plan

    @property
    def rewritten(self) -> list[str]:
        """--resume: artifacts that existed but failed verification and were rewritten."""
        return sorted(r.path for r in self.state.artifacts.values() if r.existed and r.rewritten)

    @property
    def reverified(self) -> list[str]:
        return sorted(r.path for r in self.state.artifacts.values()
                      if r.existed and not r.rewritten)


def is_hub_source(text: str) -> bool:
    if os.path.exists(text):  # a local file: the Hub client is never imported (~0.15 s)
        return False
    from meshcert.writer.hub_source import parse_coordinate

    return parse_coordinate(text) is not None


def open_source(request: WriteRequest) -> SourceModel:
    if is_hub_source(request.source):
        from meshcert.writer.hub_source import load_hub

        return load_hub(request.source, request.projectors,
                        publisher_metadata=request.pick_up_publisher_metadata
                        and request.fmt == "v2")
    return load_local(request.source, request.projectors)


def prepare(request: WriteRequest) -> Prepared:
    """Open, inspect and plan; raise Refused for anything that stops the write (nothing is
    written before this returns)."""
    check_model_id(request.model_id)
    check_source_flags(request.source_repo, request.source_revision, request.source_file)
    check_outputs(request.out_dir, request.report_files)
    source = open_source(request)
    try:
        return _prepare_opened(request, source)
    except BaseException:
        source.close()
        raise


def _prepare_opened(request: WriteRequest, source: SourceModel) -> Prepared:
    check_source_file(request.source_file, source.primary.location, hub=source.kind == "hub")
    if request.inspect:
        from meshcert.writer.inspect_source import inspect_source

        inspect_source(source)
    if not source.kv_int("embedding_length"):
        raise Refused(f"{source.primary.name}: no positive "
                      f"{source.architecture}.embedding_length (the activation width)",
                      code="bad_source")
    identity = _identity(request, source)
    plan = plan_for(request, source)
    root = Path(request.out_dir).resolve()
    need = request.sink_disk_bytes(plan) if request.sink_disk_bytes is not None else None
    existing = preflight(plan, root, request.resume, request.free_bytes, need)
    source_check = check_before_writing(identity, source)
    if source.kind == "hub":
        ref = f"hf://{source.repo}@{source.revision}/{source.primary.location}"
    else:
        ref = source.primary.location
    return Prepared(request, source, plan, identity, root, existing, ref, source_check)


def plan_for(request: WriteRequest, source: SourceModel) -> PackagePlan:
    """The plan of `request` over the opened `source`, in mesh-llm's order: the generation
    defaults validated, the publisher files refused or planned (with the manifest's source
    repo and revision; config.json checked against the GGUF), then the artifacts."""
    request_defaults = (read_generation_defaults(request.generation_defaults)
                        if request.generation_defaults is not None else None)
    named = [read_local(path) for path in request.publisher_metadata]
    publisher = plan_publisher(combine(named, list(source.publisher_files)),
                               repo=request.source_repo or source.repo,
                               revision=request.source_revision or source.revision,
                               gguf_kv=source.header.kv, architecture=source.architecture)
    return plan_package(source, request.fmt, max_artifact_bytes=request.max_artifact_bytes,
                        v2_layout=request.v2_layout, publisher=publisher,
                        request_defaults=request_defaults)


def _identity(request: WriteRequest, source: SourceModel) -> Identity:
    model_id = request.model_id
    if model_id is None and source.kind == "hub":
        from meshcert.writer.hub_source import default_model_id

        model_id = default_model_id(request.source)
    if not model_id or not model_id.strip():
        raise Refused("a local source needs --model-id (a coordinate such as "
                      "org/repo-GGUF:Q4_K_M)", code="usage")
    repo = request.source_repo or source.repo
    revision = request.source_revision or source.revision
    return Identity(model_id.strip(), repo, revision, request.source_file,
                    request.abi_version, request.generator_version)


def preflight(plan: PackagePlan, root: Path, resume: bool,
              free_bytes: Callable[[str], int], need_bytes: int | None = None) -> list[str]:
    if (root / MANIFEST_NAME).exists():
        raise Refused(f"{root} already holds {MANIFEST_NAME}: a finished "
                      "package is never overwritten (write to a new directory)",
                      code="existing_manifest")
    if root.exists() and not root.is_dir():
        raise Refused(f"{root} exists and is not a directory", code="usage")
    sources = [os.path.realpath(f.location) for f in plan.source.files + plan.source.projectors
               if plan.source.kind == "local"]
    existing: list[str] = []
    for a in plan.all_artifacts():
        path = root / a.path
        if os.path.realpath(path) in sources or any(
                path.exists() and os.path.samefile(path, s) for s in sources):
            raise Refused(f"{a.path} would be written over the source "
                          f"file {path}: choose another --out-dir", code="artifact_is_source")
        if path.exists() or path.is_symlink():
            if not path.is_file() or path.is_symlink():
                raise Refused(f"{path} exists and is not a regular file", code="existing_artifacts")
            existing.append(a.path)
    if existing and not resume:
        raise Refused(f"{root} already holds {len(existing)} of the "
                      f"{len(plan.all_artifacts())} artifacts (e.g. {existing[0]}): pass "
                      "--resume to re-verify and complete them, or choose another --out-dir",
                      code="existing_artifacts")
    sizes = {a.path: a.size for a in plan.all_artifacts()}
    have = sum(min(os.path.getsize(root / p), sizes[p]) for p in existing)
    need = (plan.total_bytes - have if need_bytes is None else need_bytes) + _MARGIN
    free = free_bytes(str(root))
    if need > free:
        raise Refused(f"the package needs {need:,} bytes ({need / 1e9:.2f} GB) "
                      f"under {root}, but only {free:,} bytes ({free / 1e9:.2f} GB) are free",
                      code="no_disk")
    return existing


def _local_signatures(source: SourceModel) -> dict[str, Signature]:
    if source.kind != "local":
        return {}
    locations = [f.location for f in source.files] + [p.location for p in source.projectors]
    return {location: signature(Path(location)) for location in locations}


def write(prepared: Prepared, progress: WriteProgress | None = None,
          cancel: threading.Event | None = None) -> WriteResult:
    """Write every artifact, then README.md and model-package.json. Raises Aborted or
    Interrupted (no manifest written) when the run cannot finish."""
    progress = progress or NullWriteProgress()
    cancel = cancel or threading.Event()
    request, plan, root = prepared.request, prepared.plan, prepared.root
    root.mkdir(parents=True, exist_ok=True)
    before = _local_signatures(plan.source)
    hook = (after_artifact_hook(request.after_artifact_command, cancel)
            if request.after_artifact_command else None)
    state = StreamState()
    finisher = Finisher(state, hook, progress, len(plan.all_artifacts()), cancel,
                        sink=request.sink)
    targets: list[Target] = []
    total = (plan.source.total_bytes + sum(p.size for p in plan.source.projectors)
             + sum(a.size for a in plan.artifacts if a.publisher is not None))
    progress.begin("writing", total)
    try:
        _stream_parts(prepared, state, finisher, targets, progress, cancel)
        if plan.carrier is not None:
            _write_carrier(prepared, state, finisher, targets)
        _copy_projectors(prepared, finisher, targets, progress, cancel)
        _copy_publisher_files(prepared, finisher, targets, progress, cancel)
        finisher.wait()
    except KeyboardInterrupt:
        cancel.set()
        finisher.close()
        _abandon(targets)
        raise Interrupted() from None
    except BaseException:
        cancel.set()
        finisher.close()
        _abandon(targets)
        raise
    finally:
        progress.end()
    finisher.close()
    _check_unchanged(root, state, plan.source, before, request.sink)
    prepared.source_check = check_after_streaming(prepared.source_check,
                                                  state.source_sha256[0])
    identity = Identity(**{**prepared.identity.__dict__, "created_at": int(time.time())})
    manifest = build_manifest(plan, identity, state)
    raw = manifest_bytes(manifest)
    digest = hashlib.sha256(raw).hexdigest()
    card = None
    if request.readme:
        card = render_card(manifest, digest, width=activation_width(plan),
                           source_ref=Path(plan.source.primary.name).name,
                           identity=_identity_said(prepared.source_check))
        write_atomic(root / README_NAME, card)
    _write_bytes_atomic(root / MANIFEST_NAME, raw)
    return WriteResult(prepared, state, manifest, digest, card)


def _identity_said(check: SourceCheck | None) -> tuple[str, str | None] | None:
    return None if check is None else (check.outcome, check.detail)


def _stream_parts(prepared: Prepared, state: StreamState, finisher: Finisher,
                  targets: list[Target], progress: WriteProgress,
                  cancel: threading.Event) -> None:
    plan = prepared.plan
    existing = set(prepared.existing)
    destinations: dict[str, list[tuple[Target, int]]] = defaultdict(list)
    for a in plan.artifacts:
        if a.verbatim:
            continue
        target = Target(prepared.root, a, a.path in existing)
        targets.append(target)
        for k, p in enumerate(a.placements):
            destinations[p.name].append((target, k))
        if target.complete:  # nothing but a header
            finisher.submit(target)
    for shard, f in enumerate(plan.source.files):
        reader = plan.source.opener(f.location)
        try:
            tensors = [t for t in plan.source.tensors if t.shard == shard]
            digest = stream_file(reader, f.raw_header, shard, tensors, destinations, state,
                                 finisher, progress, cancel)
        finally:
            reader.close()
        if f.attested_sha256 and digest != f.attested_sha256:
            raise Aborted("source_changed", f"{f.location} hashed to {digest} while streaming, "
                          f"but the Hub lists sha256 {f.attested_sha256}")
    finisher.wait()


def _write_carrier(prepared: Prepared, state: StreamState, finisher: Finisher,
                   targets: list[Target]) -> None:
    plan = prepared.plan
    assert plan.carrier is not None
    headers = {}
    for a in plan.payload:
        header = state.artifacts[a.path].header
        assert header is not None
        headers[a.path] = header
    carrier = carrier_artifact(plan, rows_from_headers(plan, headers))
    if b"".join(carrier.header_pieces()) != b"".join(plan.carrier.header_pieces()):
        raise Aborted("verification_failed", "the carrier built from the parts' headers "
                      "differs from the planned one")
    target = Target(prepared.root, carrier, carrier.path in prepared.existing)
    targets.append(target)
    finisher.submit(target)
    finisher.wait()


def _copy_projectors(prepared: Prepared, finisher: Finisher, targets: list[Target],
                     progress: WriteProgress, cancel: threading.Event) -> None:
    for a in prepared.plan.artifacts:
        if a.projector is None:
            continue
        finisher.throttle()
        target = Target(prepared.root, a, a.path in prepared.existing)
        targets.append(target)
        reader = prepared.plan.source.opener(a.projector.location)
        try:
            digest = copy_file(reader, a.projector.prefix, target, progress, cancel)
        finally:
            reader.close()
        attested = a.projector.attested_sha256
        if attested and digest != attested:
            raise Aborted("source_changed", f"{a.projector.location} hashed to {digest}, but "
                          f"the Hub lists sha256 {attested}")
        finisher.submit(target)


class _BytesReader:
    """A ByteReader over bytes already in memory (a publisher file, read and checked before
    writing began)."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    @property
    def size(self) -> int:
        return len(self._data)

    def readinto(self, offset: int, buffer: memoryview) -> int:
        piece = self._data[offset:offset + len(buffer)]
        buffer[:len(piece)] = piece
        return len(piece)

    def close(self) -> None:
        return None


def _copy_publisher_files(prepared: Prepared, finisher: Finisher, targets: list[Target],
                          progress: WriteProgress, cancel: threading.Event) -> None:
    for a in prepared.plan.artifacts:
        if a.publisher is None:
            continue
        finisher.throttle()
        target = Target(prepared.root, a, a.path in prepared.existing)
        targets.append(target)
        copy_file(_BytesReader(a.publisher.data), b"", target, progress, cancel)
        finisher.submit(target)


def _abandon(targets: list[Target]) -> None:
    for target in targets:
        target.abandon()


def _check_unchanged(root: Path, state: StreamState, source: SourceModel,
                     before: dict[str, Signature], sink: ArtifactSink | None = None) -> None:
    for result in state.artifacts.values():
        if sink is not None and sink.released(result.path):
            continue  # taken by the sink (uploaded and deleted): it checked the file itself
        try:
            now: Signature | None = signature(root / result.path)
        except FileNotFoundError:
            now = None
        if now != result.signature:
            raise Aborted("artifact_changed", f"{result.path} changed after it was verified; "
                          "the write is aborted (no manifest)")
    for location, sig in before.items():
        if signature(Path(location)) != sig:
            raise Aborted("source_changed", f"the source file {location} changed while it was "
                          "being written out; the write is aborted (no manifest)")


def write_file(source: str | os.PathLike[str], out_dir: str | os.PathLike[str],
               **fields: Any) -> WriteResult:
    """Prepare and write in one call, the source audit off unless asked (for callers that
    split models they made or already trust: the demo, benches, the test fixtures)."""
    fields.setdefault("inspect", False)
    prepared = prepare(WriteRequest(os.fspath(source), os.fspath(out_dir), **fields))
    try:
        return write(prepared)
    finally:
        prepared.source.close()


def _write_bytes_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "xb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
