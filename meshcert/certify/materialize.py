"""Materialize stages: compose a GGUF from the parts a stage selects, as a mesh-llm node does.

A stage's parts come from `meshcert.certify.stages.stage_parts` (the format's selection rule). v1:
the
KV of `shared/metadata.gguf`, then the tensors of every selected part (embeddings at the input
boundary, the layers in range, output at the final boundary), bytes located by each part's
own GGUF header. v2: the KV of the carrier without its `skippy.package.*` keys, then the
carrier's tensor directory restricted to the tensors whose artifact is selected, bytes located
by the carrier's locators (absolute offset + stored size in the artifact).

The file is written through the product's one GGUF byte writer (meshcert.core.gguf.wire, which
the package writer uses too): the KV entries copied as their raw bytes from the KV file (so a
152k-token vocabulary is never decoded to be encoded again), a tensor directory for the stage's
tensors, and the tensor bytes copied from the parts, into a temp file beside the target;
llama.cpp's own GGUF parser must re-open it (no tensor allocation, in a worker process:
`meshcert.certify.workers.llama_reopen`)
before it is renamed into place. A parser that dies on it leaves the stage undecided
(`StageBuild.death`), not failed. A small JSON
next to it records its provenance (manifest sha256, package id, every part's sha256): a later
run whose provenance matches reuses the file instead of composing it again.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from meshcert.certify.build_results import StageBuild
from meshcert.certify.formats.v2_carrier import KEY_PREFIX, SPLIT_KEYS
from meshcert.certify.manifest_model import ArtifactEntry, layer_count
from meshcert.certify.paths import unsafe_path_reason
from meshcert.certify.stages import StageRange, certification_ranges, stage_parts
from meshcert.certify.view import PackageView
from meshcert.core.cache_paths import STAGES, cache_dir
from meshcert.core.errors import MeshcertError
from meshcert.core.gguf import wire
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.names import is_metadata_role
from meshcert.core.gguf.reader import read_header_file, tensor_nbytes
from meshcert.core.progress import NullProgress, ProgressObserver, report_phase

REOPEN_TIMEOUT_S = 600.0  # wall clock of llama.cpp's parser on one composed stage
PROVENANCE_SCHEMA = 1
_COPY_CHUNK = 8 << 20
Advance = Callable[[int], None]


class ComposeError(MeshcertError, ValueError):
    """The stage cannot be composed from the package (a package fault, with the reason)."""


@dataclass(frozen=True)
class TensorCopy:
    name: str
    shape: tuple[int, ...]  # GGUF order
    ggml_type: int
    n_bytes: int
    file: str  # absolute path of the part holding the bytes
    offset: int  # absolute offset of the bytes in that file


@dataclass(frozen=True)
class StageComposition:
    kv_file: str  # the GGUF whose KV the stage carries (v1 metadata.gguf, v2 carrier)
    tensors: list[TensorCopy]
    parts: list[ArtifactEntry]

    @property
    def tensor_bytes(self) -> int:
        return sum(t.n_bytes for t in self.tensors)


def default_dir() -> Path:
    return cache_dir(STAGES)


def _local(view: PackageView, rel: Any) -> str:
    reason = unsafe_path_reason(rel)
    if reason is not None or view.local_dir is None:
        raise ComposeError(f"artifact path {rel!r} is not usable: {reason or 'not local'}")
    return os.path.join(view.local_dir, *str(rel).split("/"))


def compose(view: PackageView, stage: StageRange, total_layers: int) -> StageComposition:
    """Which KV and which tensor bytes make up the stage (reads no file besides the view)."""
    parts = [p for p in stage_parts(view.artifacts(), view.package_format, stage, total_layers)
             if p.role != "projector"]  # projectors are loaded beside the model, not in it
    metadata = next((p for p in parts if p.role == "shared.metadata"), None)
    if metadata is None:
        raise ComposeError("the package declares no metadata artifact")
    tensors = (_v2_tensors(view, parts) if view.package_format == "v2"
               else _first_metadata_copies(_v1_tensors(view, parts)))
    seen: set[str] = set()
    for t in tensors:
        if t.name in seen:
            raise ComposeError(f"tensor {t.name} is selected twice")
        seen.add(t.name)
        expected = tensor_nbytes(t.shape, t.ggml_type)
        if expected <= 0 or expected != t.n_bytes:
            raise ComposeError(f"tensor {t.name}: stored length {t.n_bytes} is not the "
                               f"{expected} bytes of its type and shape")
    return StageComposition(kv_file=_local(view, metadata.path), tensors=tensors, parts=parts)


def _first_metadata_copies(tensors: list[TensorCopy]) -> list[TensorCopy]:
    """The real v1 writer copies every metadata-role tensor (rope_freqs.weight, ...) into
    every fragment; a stage takes the first copy (metadata.gguf's), as mesh-llm's
    write_gguf_from_parts does. The copies are byte-identical or the package fails
    `metadata_tensor_copies_differ`. An owned tensor held twice is still an error."""
    kept: set[str] = set()
    out = []
    for t in tensors:
        if is_metadata_role(t.name):
            if t.name in kept:
                continue
            kept.add(t.name)
        out.append(t)
    return out


def _v1_tensors(view: PackageView, parts: list[ArtifactEntry]) -> list[TensorCopy]:
    """Every part's tensors in the parts' order, metadata.gguf first (its metadata-role
    tensors are the first copies)."""
    out: list[TensorCopy] = []
    for part in parts:
        header = view.headers.get(part.path) if isinstance(part.path, str) else None
        if not isinstance(header, GGUFHeader):
            why = header.message if header is not None else "no GGUF header was read"
            raise ComposeError(f"{part.path}: {why}")
        file = _local(view, part.path)
        out += [TensorCopy(t.name, t.shape, t.ggml_type, t.n_bytes, file,
                           header.data_offset + t.offset) for t in header.tensors]
    return out


def _v2_tensors(view: PackageView, parts: list[ArtifactEntry]) -> list[TensorCopy]:
    tensor_catalog = view.tensor_catalog()
    if tensor_catalog is None or not tensor_catalog.usable:
        problems = ("; ".join(tensor_catalog.problems[:3]) if tensor_catalog
                    else "carrier header unreadable")
        raise ComposeError(f"the carrier's tensor catalog is unusable: {problems}")
    selected = {p.artifact_id for p in parts}
    out: list[TensorCopy] = []
    for t in tensor_catalog.tensors:
        if t.artifact is None:
            raise ComposeError(f"tensor {t.name}: tensor_part {t.part} names no artifact")
        if t.artifact.artifact_id in selected:
            out.append(TensorCopy(t.name, t.shape, t.ggml_type, t.size,
                                  _local(view, t.artifact.path), t.offset))
    return out


# --- writing ----------------------------------------------------------------------------
def _read_kv(path: str) -> GGUFHeader:
    header = read_header_file(path)  # big arrays stay summaries: entries are copied raw
    if not isinstance(header, GGUFHeader):
        raise ComposeError(f"{path}: {header.message}")
    return header


def _kv_keys(header: GGUFHeader) -> list[str]:
    """The KV file's keys a node's stage keeps, in the file's order (general.architecture
    included: it is copied like every other entry)."""
    return [k for k in header.kv if not k.startswith(KEY_PREFIX) and k not in SPLIT_KEYS]


def write_gguf(target: Path, comp: StageComposition, advance: Advance | None = None, *,
               timeout_s: float = REOPEN_TIMEOUT_S) -> int:
    """Write the composition to `target` atomically; returns the file size. The temp file is
    re-opened with llama.cpp's parser before the rename, and removed on any failure."""
    from meshcert.certify.workers.llama_reopen import reopen

    header = _read_kv(comp.kv_file)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        _write(tmp, header, comp, advance or (lambda _n: None))
        n_tensors, _ = reopen(str(tmp), timeout_s=timeout_s)
        if n_tensors != len(comp.tensors):
            raise ComposeError(f"llama.cpp reads {n_tensors} tensors, {len(comp.tensors)} "
                               "were written")
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target.stat().st_size


def _kv_entries(header: GGUFHeader, kv_file: str) -> list[bytes]:
    """Each kept KV entry (key, value type, value) as it lies in the KV file."""
    if header.byte_order != "<":
        raise ComposeError(f"{kv_file}: a big-endian GGUF cannot be composed into a stage")
    entries: list[bytes] = []
    with open(kv_file, "rb") as src:
        for key in _kv_keys(header):
            span = header.kv_spans.get(key)
            if span is None:
                raise ComposeError(f"{kv_file}: where entry {key} lies was not recorded")
            src.seek(span[0])
            raw = src.read(span[1] - span[0])
            if len(raw) != span[1] - span[0]:
                raise ComposeError(f"{kv_file}: cut short inside entry {key}")
            entries.append(raw)
    return entries


def _write(path: Path, header: GGUFHeader, comp: StageComposition, advance: Advance) -> None:
    if header.architecture is None:
        raise ComposeError(f"{comp.kv_file}: no general.architecture to compose a stage with")
    alignment = header.alignment
    entries = _kv_entries(header, comp.kv_file)
    directory: list[bytes] = []
    offsets: list[int] = []
    cursor = 0
    for t in comp.tensors:
        cursor = wire.align(cursor, alignment)
        offsets.append(cursor)
        directory.append(wire.tensor_info(t.name, t.shape, t.ggml_type, cursor))
        cursor += t.n_bytes
    with open(path, "wb") as out:
        out.write(wire.preamble(len(comp.tensors), len(entries)))
        for piece in (*entries, *directory):
            out.write(piece)
        data_start = wire.align(out.tell(), alignment)
        for t, offset in zip(comp.tensors, offsets, strict=True):
            _pad_to(out, data_start + offset)
            _copy(out, t, advance)
        _pad_to(out, data_start + wire.align(cursor, alignment))


def _pad_to(out: BinaryIO, position: int) -> None:
    out.write(b"\0" * (position - out.tell()))


def _copy(out: BinaryIO, t: TensorCopy, advance: Advance) -> None:
    with open(t.file, "rb") as src:
        if t.offset + t.n_bytes > os.fstat(src.fileno()).st_size:
            raise ComposeError(f"tensor {t.name}: bytes {t.offset}..{t.offset + t.n_bytes} "
                               f"lie past the end of {t.file}")
        src.seek(t.offset)
        left = t.n_bytes
        while left:
            chunk = src.read(min(left, _COPY_CHUNK))
            if not chunk:
                raise ComposeError(f"{t.file}: cut short while copying {t.name}")
            out.write(chunk)
            left -= len(chunk)
            advance(len(chunk))


# --- stages with provenance -----------------------------------------------------------------
def provenance(view: PackageView, stage: StageRange, comp: StageComposition) -> dict[str, Any]:
    """What the stage file was built from: equal provenance means an equal file."""
    parts = []
    for p in comp.parts:
        fact = view.files.get(p.path) if isinstance(p.path, str) else None
        parts.append({"path": p.path, "sha256": (fact.sha256 if fact and fact.sha256
                                                  else p.declared_sha256()),
                      "size": fact.size if fact else p.declared_size})
    manifest = view.manifest or {}
    return {"schema": PROVENANCE_SCHEMA, "stage_id": stage.stage_id,
            "layer_start": stage.layer_start, "layer_end": stage.layer_end,
            "package_format": view.package_format,
            "manifest_sha256": hashlib.sha256(view.manifest_raw or b"").hexdigest(),
            "package_id": manifest.get("package_id"), "parts": parts,
            "tensor_count": len(comp.tensors)}


def _reusable(target: Path, sidecar: Path, wanted: dict[str, Any], timeout_s: float) -> bool:
    from meshcert.certify.workers.llama_reopen import reopen

    try:
        recorded = json.loads(sidecar.read_text(encoding="utf-8"))
        if recorded.get("provenance") != wanted or target.stat().st_size != recorded["size"]:
            return False
        return reopen(str(target), timeout_s=timeout_s)[0] == wanted["tensor_count"]
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def materialize_stage(view: PackageView, stage: StageRange, total_layers: int, root: Path,
                      progress: ProgressObserver, timeout_s: float = REOPEN_TIMEOUT_S
                      ) -> StageBuild:
    from meshcert.certify.workers.llama_reopen import LlamaCppCrashed, LlamaParserUnavailable

    try:
        return _materialize_stage(view, stage, total_layers, root, progress, timeout_s)
    except LlamaParserUnavailable as exc:  # asked for, tool missing: incomplete, not skipped
        return StageBuild(stage.stage_id, not_run=str(exc))
    except LlamaCppCrashed as exc:
        return StageBuild(stage.stage_id, death=exc.death)


def _materialize_stage(view: PackageView, stage: StageRange, total_layers: int, root: Path,
                       progress: ProgressObserver, timeout_s: float) -> StageBuild:
    try:
        comp = compose(view, stage, total_layers)
    except ComposeError as exc:
        return StageBuild(stage.stage_id, error=str(exc))
    wanted = provenance(view, stage, comp)
    key = hashlib.sha256(json.dumps(wanted, sort_keys=True).encode()).hexdigest()[:16]
    target = root / f"{stage.stage_id}-{key}.gguf"
    sidecar = target.with_suffix(".json")
    name = f"materialize {stage.stage_id} (layers {stage.layers})"
    if sidecar.is_file():
        report_phase(progress, f"{name}: re-opening the cached build with llama.cpp")
    if _reusable(target, sidecar, wanted, timeout_s):
        report_phase(progress, f"{name}: reused from the cache")
        return StageBuild(stage.stage_id, path=str(target), size=target.stat().st_size,
                          tensor_count=len(comp.tensors), reused=True)
    report_phase(progress, f"{name}: assembling {len(comp.tensors)} tensors, "
                 f"{comp.tensor_bytes:,} bytes, then re-opening it with llama.cpp")
    progress.begin(name, comp.tensor_bytes)  # off a terminal: its lines carry the same name
    try:
        size = write_gguf(target, comp, progress.advance, timeout_s=timeout_s)
        _write_json(sidecar, {"provenance": wanted, "size": size})
    except ValueError as exc:  # ComposeError, or llama.cpp's parser rejected the file
        return StageBuild(stage.stage_id, error=str(exc))
    except OSError as exc:  # the cache dir, not the package: not a package fault
        return StageBuild(stage.stage_id, not_run=f"cannot write {target}: {exc.strerror or exc}")
    finally:
        progress.end()
    report_phase(progress, f"{name}: built, {size:,} bytes")
    return StageBuild(stage.stage_id, path=str(target), size=size,
                      tensor_count=len(comp.tensors))


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def materialize_stages(view: PackageView, root: Path | None = None,
                       progress: ProgressObserver | None = None,
                       timeout_s: float = REOPEN_TIMEOUT_S) -> list[StageBuild]:
    """Build (or reuse) both certification stages of a local package; results on the view."""
    progress = progress or NullProgress()
    total = layer_count(view.manifest) if view.manifest is not None else None
    ranges = certification_ranges(total) if total else []
    if view.local_dir is None:
        builds = [StageBuild(s.stage_id, not_run="the package files are not on local disk")
                  for s in ranges]
    else:
        base = (root or default_dir()) / hashlib.sha256(
            view.manifest_raw or b"").hexdigest()[:16]
        builds = [materialize_stage(view, s, total or 0, base, progress, timeout_s)
                  for s in ranges]
    view.stage_builds = {b.stage_id: b for b in builds}
    return builds
