"""Split a real GGUF model into a layer package, v1 or v2, the way mesh-llm's writers lay it out.

The source is read with meshcert's header reader (every array materialized: 0.3 s for Gemma 3's
262k-token vocabulary, where gguf.GGUFReader takes 16 s) and each fragment is written with the
gguf library's GGUFWriter, tensor bytes copied verbatim from the source. So tests and the demo
certify packages of real models, written the way a real converter writes GGUF.

- v1 (`skippy-model-package write-package`): `shared/{metadata,embeddings,output}.gguf`,
  `layers/layer-NNN.gguf` (3 digits, as published packages are); every fragment repeats all
  source KVs, then `general.alignment` and its `skippy.slice.*` keys, and holds its own
  tensors plus every metadata-role tensor (rope_freqs.weight, ...), in source order; the
  writer's manifest key order, `source_model.path` = the absolute source path, `files[]` with
  `size_bytes`/`sha256` null (a local input), `activation_width` and `created_at_unix_secs`
  always.
- v2: `shared/metadata.gguf` (the carrier: metadata + the whole tensor directory + locator
  keys, no data), then either the current layout (`shared/common.gguf`, or
  `shared/common-partNN.gguf` past the part budget) or the earlier one
  (`shared/embeddings.gguf` + `shared/output.gguf`), `layers/layer-NNNNN.gguf` (5 digits, or
  `-partMM` past the budget); every payload artifact repeats the source's normalized metadata;
  `package_id` is the canonical id.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
from gguf import GGMLQuantizationType, GGUFValueType, GGUFWriter

from certify.byte_source import LocalFileSource
from certify.formats.package_id import compute_package_id
from certify.formats.v2_carrier import (
    LOCATOR_SCHEMA,
    METADATA_ONLY,
    PART_COUNT,
    SPLIT_KEYS,
    SUPPORTED_LOCATOR_SCHEMA,
    TENSOR_ALIGNMENT,
    TENSOR_OFFSET,
    TENSOR_PART,
    TENSOR_SIZE,
)
from certify.gguf.model import GGUFHeader, TensorInfo
from certify.gguf.names import layer_of, tensor_role, writer_layer_of
from certify.gguf.reader import ReadLimits, read_header_with_limits
from meshcert.packagegen.writer import sha256_of, write_manifest_and_card

V2Layout = Literal["common", "legacy"]
Locator = tuple[int, int, int, int]  # (part, absolute offset, stored size, alignment)
SKIPPY_ABI = "0.1.54"
GENERATOR = "meshcert-packagegen 0.1.0"
FULL_READ = ReadLimits(array_items=1 << 24, total_items=1 << 27)
ALIGNMENT_KEY = "general.alignment"
SLICE_PREFIX = "skippy.slice."
# keys GGUFWriter writes itself (it is constructed with the architecture)
WRITER_OWNED = frozenset({"general.architecture"})


class SplitError(RuntimeError):
    pass


class _MemoWriter(GGUFWriter):
    """GGUFWriter that packs each long array once per split: every payload fragment repeats
    the source's tokenizer arrays, and packing 262k strings takes about a second each time.
    The memo is keyed on the array object of the source header, which outlives the split."""

    def __init__(self, path: str, arch: str, memo: dict[tuple[int, int, bool], bytes]) -> None:
        super().__init__(path, arch)
        self._memo = memo

    def _pack_val(self, val: Any, vtype: GGUFValueType, add_vtype: bool,
                  sub_type: GGUFValueType | None = None) -> bytes:
        if not (isinstance(val, list) and len(val) > 1024):
            return super()._pack_val(val, vtype, add_vtype, sub_type)
        key = (id(val), int(vtype), add_vtype)
        if key not in self._memo:
            self._memo[key] = super()._pack_val(val, vtype, add_vtype, sub_type)
        return self._memo[key]


@dataclass
class SplitPackage:
    root: Path
    manifest: dict[str, Any]
    source_path: Path
    files: dict[str, Path] = field(default_factory=dict)  # package path -> file
    header: GGUFHeader | None = None  # the source's header


@dataclass(frozen=True)
class _Fragment:
    artifact_id: str
    path: str
    tensors: list[TensorInfo]


def read_source(path: Path) -> GGUFHeader:
    header = read_header_with_limits(LocalFileSource(path), FULL_READ)
    if not isinstance(header, GGUFHeader):
        raise SplitError(f"{path}: {header.message}")
    return header


def _add_kv(writer: GGUFWriter, header: GGUFHeader, key: str) -> None:
    value_type = GGUFValueType(header.kv_types[key])
    value = header.kv[key]
    if value_type == GGUFValueType.ARRAY:
        sub = GGUFValueType(header.array_types[key])
        writer.add_key_value(key, value, value_type, sub_type=sub)
    else:
        writer.add_key_value(key, value, value_type)


def _write_fragment(path: Path, header: GGUFHeader, keys: list[str], tensors: list[TensorInfo],
                    source: Path, extra: list[tuple[str, Any, GGUFValueType,
                                                    GGUFValueType | None]] | None = None,
                    directory_only: bool = False, trim_padding: bool = False,
                    memo: dict[tuple[int, int, bool], bytes] | None = None,
                    prepend: list[tuple[str, np.ndarray]] | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    arch = header.architecture or "llama"
    writer = _MemoWriter(str(path), arch, memo if memo is not None else {})
    writer.data_alignment = header.alignment  # the padding the general.alignment key promises
    for key in keys:
        if key not in WRITER_OWNED:
            _add_kv(writer, header, key)
    for key, value, vtype, sub in extra or []:
        writer.add_key_value(key, value, vtype, sub_type=sub)
    for name, array in prepend or []:
        writer.add_tensor(name, array)
    with open(source, "rb") as handle:
        for t in tensors:
            numpy_shape = tuple(reversed(t.shape))
            raw_type = GGMLQuantizationType(t.ggml_type)
            if directory_only:
                writer.add_tensor_info(t.name, numpy_shape, np.dtype(np.float32), t.n_bytes,
                                       raw_dtype=raw_type)
                continue
            handle.seek(header.data_offset + t.offset)
            data = np.frombuffer(handle.read(t.n_bytes), dtype=np.uint8)
            if len(data) != t.n_bytes:
                raise SplitError(f"{source}: tensor {t.name} is cut short")
            writer.add_tensor_info(t.name, numpy_shape, np.dtype(np.float32), t.n_bytes,
                                   raw_dtype=raw_type)
            writer.tensors[-1][t.name].tensor = data
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    if directory_only:
        writer.write_ti_data_to_file()
        assert writer.fout is not None
        for out in writer.fout:
            writer.write_padding(out, out.tell())
    else:
        writer.write_tensors_to_file()
    writer.close()
    if trim_padding and tensors and not directory_only:
        last = max(tensors, key=lambda t: t.offset)
        written = read_source(path)
        end = written.data_offset + next(
            w.offset for w in written.tensors if w.name == last.name) + last.n_bytes
        os.truncate(path, end)


def with_extra_tensors(source: Path, out: Path, tensors: list[tuple[str, np.ndarray]]) -> Path:
    """A copy of `source` with `tensors` (f32/f16 arrays) in front of its own, every KV and
    tensor byte kept: how llama.cpp's converter emits a generated tensor such as Llama 3's
    rope_freqs.weight, first in the file."""
    header = read_source(source)
    _write_fragment(out, header, list(header.kv), list(header.tensors), source,
                    prepend=tensors)
    return out


def _partition(header: GGUFHeader) -> tuple[list[TensorInfo], list[TensorInfo],
                                            list[TensorInfo], dict[int, list[TensorInfo]]]:
    """(embeddings, output, other non-layer, per-layer) in source order."""
    embeddings, output, other = [], [], []
    layers: dict[int, list[TensorInfo]] = {}
    for t in header.tensors:
        layer = layer_of(t.name)
        if layer is not None:
            layers.setdefault(layer, []).append(t)
        elif t.name.startswith("token_embd"):
            embeddings.append(t)
        elif t.name.startswith("output"):
            output.append(t)
        else:
            other.append(t)
    return embeddings, output, other, layers


def _block_count(header: GGUFHeader) -> int:
    value = header.kv.get(f"{header.architecture}.block_count")
    if not isinstance(value, int):
        raise SplitError("the source has no {arch}.block_count")
    return value


def _nextn_layers(header: GGUFHeader) -> list[int]:
    return sorted({layer for t in header.tensors if ".nextn." in t.name
                   if (layer := layer_of(t.name)) is not None})


def _by_budget(tensors: list[TensorInfo], budget: int | None) -> list[list[TensorInfo]]:
    if budget is None:
        return [tensors]
    groups: list[list[TensorInfo]] = [[]]
    size = 0
    for t in tensors:
        if groups[-1] and size + t.n_bytes > budget:
            groups.append([])
            size = 0
        groups[-1].append(t)
        size += t.n_bytes
    return groups


# --- v1 ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SliceSpec:
    """What the v1 writer asks its native slice writer for, and records as skippy.slice.*."""

    stage_index: int
    layer_start: int
    layer_end: int
    include_embeddings: bool
    include_output: bool

    def selects(self, name: str) -> bool:
        """The native writer's selection: the layers in range, embeddings / output and final
        norm when included, and every metadata-role tensor, whatever the fragment."""
        role = tensor_role(name)
        if role == "layer":
            layer = writer_layer_of(name)
            return layer is not None and self.layer_start <= layer < self.layer_end
        if role == "embedding":
            return self.include_embeddings
        if role in ("output", "final_norm"):
            return self.include_output
        return True

    def keys(self) -> list[tuple[str, Any, GGUFValueType, GGUFValueType | None]]:
        i32, flag = GGUFValueType.INT32, GGUFValueType.BOOL
        return [(f"{SLICE_PREFIX}stage_index", self.stage_index, i32, None),
                (f"{SLICE_PREFIX}layer_start", self.layer_start, i32, None),
                (f"{SLICE_PREFIX}layer_end", self.layer_end, i32, None),
                (f"{SLICE_PREFIX}include_embeddings", self.include_embeddings, flag, None),
                (f"{SLICE_PREFIX}include_output", self.include_output, flag, None)]


def v1_layout(layer_count: int) -> list[tuple[str, str, SliceSpec]]:
    """(manifest key, path, slice) of every v1 fragment, in the writer's order."""
    out = [("metadata", "shared/metadata.gguf", SliceSpec(0, 0, 0, False, False)),
           ("embeddings", "shared/embeddings.gguf", SliceSpec(1, 0, 0, True, False)),
           ("output", "shared/output.gguf",
            SliceSpec(2, layer_count, layer_count, False, True))]
    out += [(f"layer:{b}", f"layers/layer-{b:03d}.gguf", SliceSpec(1000 + b, b, b + 1, False,
                                                                     False))
            for b in range(layer_count)]
    return out


def split_v1(source: Path, out: Path, *, model_id: str, repo: str | None = None,
             revision: str | None = None, readme: bool = True,
             keep_split_keys: bool = False) -> SplitPackage:
    """A v1 package exactly as `skippy-model-package write-package` writes one: every fragment
    repeats all source KVs, then `general.alignment` and the `skippy.slice.*` keys of its
    slice; each holds its own tensors plus every metadata-role tensor (rope_freqs.weight, ...),
    in source order. `keep_split_keys` leaves the source's split.* keys in, as older builds
    did."""
    source = source.resolve()
    header = read_source(source)
    keys = [k for k in header.kv if k != ALIGNMENT_KEY and (keep_split_keys
                                                           or k not in SPLIT_KEYS)]
    alignment = (ALIGNMENT_KEY, header.alignment, GGUFValueType.UINT32, None)
    count = _block_count(header)
    memo: dict[tuple[int, int, bool], bytes] = {}
    files: dict[str, Path] = {}
    entries: dict[str, dict[str, Any]] = {}
    for key, rel, spec in v1_layout(count):
        tensors = [t for t in header.tensors if spec.selects(t.name)]
        path = out / rel
        _write_fragment(path, header, keys, tensors, source, extra=[alignment, *spec.keys()],
                        memo=memo)
        files[rel] = path
        entries[key] = {"path": rel, "tensor_count": len(tensors),
                        "tensor_bytes": sum(t.n_bytes for t in tensors),
                        "artifact_bytes": path.stat().st_size, "sha256": sha256_of(path)}
    source_model: dict[str, Any] = {"path": str(source), "sha256": sha256_of(source)}
    if repo:
        source_model["repo"] = repo
    if revision:
        source_model["revision"] = revision
    source_model["primary_file"] = source.name
    source_model["files"] = [{"path": source.name, "size_bytes": None, "sha256": None}]
    width = header.kv.get(f"{header.architecture}.embedding_length")
    manifest: dict[str, Any] = {
        "schema_version": 1, "model_id": model_id, "source_model": source_model,
        "format": "layer-package", "layer_count": count, "activation_width": width,
        "shared": {k: entries[k] for k in ("metadata", "embeddings", "output")},
        "layers": [{"layer_index": b, **entries[f"layer:{b}"]} for b in range(count)],
        "skippy_abi_version": SKIPPY_ABI, "created_at_unix_secs": int(time.time()),
    }
    nextn = _nextn_layers(header)
    if nextn:  # the writer's speculative shape: a proposer AND a strategy repeating its fields
        fields = {"prediction_depth": 1, "layer_indices": nextn}
        manifest_items = list(manifest.items())
        manifest_items.insert(6, ("generation", {"speculative_decoding": {
            "default": "mtp",
            "proposers": {"mtp": {"type": "native-mtp", **fields}},
            "strategies": {"mtp": {"type": "native-mtp", "proposer": "mtp", **fields}}}}))
        manifest = dict(manifest_items)
    return _finish(out, manifest, source, files, header, readme)


# --- v2 ---------------------------------------------------------------------------------------
def split_v2(source: Path, out: Path, *, model_id: str, layout: V2Layout = "common",
             part_budget: int | None = None, repo: str | None = None,
             revision: str | None = None, readme: bool = True,
             repeat_metadata: bool = True) -> SplitPackage:
    """A v2 package: carrier + payload artifacts + the canonical package id."""
    source = source.resolve()
    header = read_source(source)
    keys = [k for k in header.kv if k not in SPLIT_KEYS]
    payload_keys = keys if repeat_metadata else [k for k in keys
                                                 if not k.startswith("tokenizer.")]
    embeddings, output, other, layers = _partition(header)
    count = _block_count(header)
    fragments: list[_Fragment] = []
    if layout == "common":
        groups = _by_budget(embeddings + other + output, part_budget)
        if len(groups) == 1:
            fragments.append(_Fragment("common", "shared/common.gguf", groups[0]))
        else:
            fragments += [_Fragment(f"common-part{i:02d}", f"shared/common-part{i:02d}.gguf", g)
                          for i, g in enumerate(groups)]
    else:
        fragments.append(_Fragment("embeddings", "shared/embeddings.gguf", embeddings))
        fragments.append(_Fragment("output", "shared/output.gguf", output))
        if other:
            fragments.append(_Fragment("common", "shared/common.gguf", other))
    for b in range(count):
        groups = _by_budget(layers.get(b, []), part_budget)
        if len(groups) == 1:
            fragments.append(_Fragment(f"layer-{b:05d}", f"layers/layer-{b:05d}.gguf",
                                       groups[0]))
        else:
            fragments += [_Fragment(f"layer-{b:05d}-part{i:02d}",
                                    f"layers/layer-{b:05d}-part{i:02d}.gguf", g)
                          for i, g in enumerate(groups)]
    fragments.sort(key=lambda f: f.artifact_id)
    memo: dict[tuple[int, int, bool], bytes] = {}
    files: dict[str, Path] = {}
    catalog: list[dict[str, Any]] = []
    directory: list[TensorInfo] = []
    locators: list[Locator] = []
    for part, frag in enumerate(fragments):
        path = out / frag.path
        _write_fragment(path, header, payload_keys, frag.tensors, source,
                        trim_padding="-part" in frag.path, memo=memo)
        written = read_source(path)
        own = {t.name: t for t in written.tensors}
        for t in frag.tensors:
            directory.append(t)
            locators.append((part, written.data_offset + own[t.name].offset, t.n_bytes,
                             written.alignment))
        files[frag.path] = path
        catalog.append({"id": frag.artifact_id, "path": frag.path,
                        "byte_size": path.stat().st_size, "sha256": sha256_of(path)})
    carrier = out / "shared/metadata.gguf"
    write_carrier(carrier, header, source, directory, locators, part_count=len(fragments),
                  memo=memo)
    files["shared/metadata.gguf"] = carrier
    catalog.insert(0, {"id": "metadata", "path": "shared/metadata.gguf",
                       "byte_size": carrier.stat().st_size, "sha256": sha256_of(carrier)})
    source_sha = sha256_of(source)
    source_model: dict[str, Any] = {"sha256": source_sha, "metadata_artifact_id": "metadata"}
    if repo:
        source_model["repo"] = repo
    if revision:
        source_model["revision"] = revision
    source_model["primary_file"] = source.name
    source_model["files"] = [{"path": source.name, "byte_size": source.stat().st_size,
                              "sha256": source_sha}]
    manifest: dict[str, Any] = {
        "schema_version": 2, "package_id": "", "model_id": model_id,
        "source_model": source_model, "format": "gguf", "layer_count": count,
        "artifact_catalog": {"entries": catalog},
    }
    nextn = _nextn_layers(header)
    if nextn:  # the v2 writer emits generation only for native MTP
        manifest["generation"] = {"speculative_decoding": {
            "default": "mtp", "strategies": {"mtp": {
                "type": "native-mtp", "prediction_depth": 1, "layer_indices": [count - 1],
                "window_policy": {"default": "fixed", "initial_window": 1, "min_window": 1,
                                  "max_window": 1}}}}}
    manifest |= {"native_abi_version": SKIPPY_ABI, "generator_version": GENERATOR,
                 "created_at_unix_secs": int(time.time())}
    manifest["package_id"] = compute_package_id(manifest)
    return _finish(out, manifest, source, files, header, readme)


def write_carrier(path: Path, header: GGUFHeader, source: Path, directory: list[TensorInfo],
                  locators: list[Locator], *, part_count: int,
                  memo: dict[tuple[int, int, bool], bytes] | None = None,
                  metadata_only: Any = True, locator_schema: int = SUPPORTED_LOCATOR_SCHEMA,
                  ) -> None:
    """The v2 metadata carrier: the source's metadata (split.* removed, general.alignment
    added when absent), the whole tensor directory with no data, and the locator keys.
    Tests pass odd `locators`/`metadata_only` values to build broken carriers."""
    keys = [k for k in header.kv if k not in SPLIT_KEYS]
    extra: list[tuple[str, Any, GGUFValueType, GGUFValueType | None]] = []
    if "general.alignment" not in header.kv:
        extra.append(("general.alignment", 32, GGUFValueType.UINT32, None))
    marker_type = GGUFValueType.BOOL if isinstance(metadata_only, bool) else GGUFValueType.UINT8
    extra += [
        (METADATA_ONLY, metadata_only, marker_type, None),
        (LOCATOR_SCHEMA, locator_schema, GGUFValueType.UINT32, None),
        (PART_COUNT, part_count, GGUFValueType.UINT32, None),
        (TENSOR_PART, [loc[0] for loc in locators], GGUFValueType.ARRAY, GGUFValueType.UINT32),
        (TENSOR_OFFSET, [loc[1] for loc in locators], GGUFValueType.ARRAY,
         GGUFValueType.UINT64),
        (TENSOR_SIZE, [loc[2] for loc in locators], GGUFValueType.ARRAY, GGUFValueType.UINT64),
        (TENSOR_ALIGNMENT, [loc[3] for loc in locators], GGUFValueType.ARRAY,
         GGUFValueType.UINT32),
    ]
    _write_fragment(path, header, keys, directory, source, extra=extra, directory_only=True,
                    memo=memo)


def _finish(out: Path, manifest: dict[str, Any], source: Path, files: dict[str, Path],
            header: GGUFHeader, readme: bool) -> SplitPackage:
    write_manifest_and_card(out, manifest, model_card if readme else None)
    return SplitPackage(out, manifest, source, files, header)


def model_card(manifest: dict[str, Any], manifest_sha256: str) -> str:
    """A model card holding every item package.md asks for (both formats)."""
    src = manifest["source_model"]
    v2 = manifest.get("schema_version") == 2
    abi = manifest.get("native_abi_version" if v2 else "skippy_abi_version")
    lines = [
        f"# {manifest['model_id']} (mesh-llm layer package)", "",
        f"- Source model: {src.get('repo') or manifest['model_id']} at revision "
        f"{src.get('revision') or 'unknown'}",
        f"- Source artifact: {src.get('primary_file')} (sha256 {src['sha256']})",
        f"- Manifest: model-package.json (sha256 {manifest_sha256})",
        f"- Layer count: {manifest['layer_count']}",
    ]
    if not v2:
        lines.append(f"- Activation width: {manifest['activation_width']}")
    else:
        lines.append(f"- Package id: {manifest['package_id']}")
    lines.append(f"- Skippy ABI version: {abi}")
    spec = (manifest.get("generation") or {}).get("speculative_decoding")
    if spec:
        lines.append(f"- Generation defaults: speculative strategy {spec['default']} "
                     "(native MTP, prediction depth 1)")
    else:
        lines.append("- Generation defaults: none declared")
    lines += ["", "## Validation", "",
              "`meshcert models certify hf://<repo>@<sha> --package-only --report-out "
              "cert.json`: passed", "", "## Certification notes", "",
              "Model-family certification: split by meshcert's package generator from the "
              "source GGUF; tensors are byte-identical to the source.", ""]
    return "\n".join(lines)
