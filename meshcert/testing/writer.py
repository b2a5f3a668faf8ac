"""Split a tiny model into a real layer package: GGUF fragments, manifest, README.

The source model is written with gguf.GGUFWriter, as a real converter writes one, and split by
the writer (what `meshcert package write` runs), so fixtures are what a real writer writes;
sizes and SHA-256 in the manifest are measured from the written files.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGML_QUANT_SIZES, GGUFWriter
from gguf import GGMLQuantizationType as Q

from meshcert.testing.models import ModelSpec, TensorSpec

ABI_VERSION = "0.1.0"
_FLOAT_DTYPES = {Q.F32: np.float32, Q.F16: np.float16}


@dataclass
class PackageInfo:
    root: Path
    manifest: dict[str, Any]
    spec: ModelSpec
    source_path: Path | None = None
    files: dict[str, Path] = field(default_factory=dict)


def tensor_nbytes(t: TensorSpec) -> int:
    block, type_size = GGML_QUANT_SIZES[t.ggml_type]
    n = int(np.prod(t.shape))
    return n // block * type_size


def _tensor_data(t: TensorSpec, rng: np.random.Generator) -> tuple[np.ndarray, Q | None]:
    numpy_shape = tuple(reversed(t.shape))
    if t.ggml_type in _FLOAT_DTYPES:
        data = (rng.standard_normal(numpy_shape) * 0.02).astype(_FLOAT_DTYPES[t.ggml_type])
        return data, None
    block, type_size = GGML_QUANT_SIZES[t.ggml_type]
    if t.shape[0] % block:
        raise ValueError(f"{t.name}: ne[0]={t.shape[0]} is not a multiple of {block}")
    byte_shape = (*numpy_shape[:-1], numpy_shape[-1] // block * type_size)
    data = rng.integers(0, 256, size=byte_shape, dtype=np.uint8)
    return data, t.ggml_type


def _write_gguf(path: Path, arch: str, kv: dict[str, Any], tensors: list[TensorSpec],
                seed: int, split_max_tensors: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = GGUFWriter(str(path), arch, split_max_tensors=split_max_tensors)
    for key, value in kv.items():
        if key == "general.architecture":
            continue
        add_kv(writer, key, value)
    for t in tensors:  # the directory first, then each tensor's data as it is generated
        shape = tuple(reversed(t.shape))
        raw_dtype = None if t.ggml_type in _FLOAT_DTYPES else t.ggml_type
        if raw_dtype is not None:  # a quantized tensor is described by its byte shape
            block, type_size = GGML_QUANT_SIZES[t.ggml_type]
            shape = (*shape[:-1], shape[-1] // block * type_size)
        dtype = np.dtype(_FLOAT_DTYPES.get(t.ggml_type, np.uint8))
        writer.add_tensor_info(t.name, shape, dtype, tensor_nbytes(t), raw_dtype=raw_dtype)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for t in tensors:
        # one generator per tensor name: a tensor has the same bytes in the source and package
        rng = np.random.default_rng([seed, zlib.crc32(t.name.encode())])
        writer.write_tensor_data(_tensor_data(t, rng)[0])
    writer.close()


def add_kv(writer: GGUFWriter, key: str, value: Any) -> None:
    """Write a plain Python value with the GGUF type a converter would pick for it."""
    if isinstance(value, bool):
        writer.add_bool(key, value)
    elif isinstance(value, int):
        writer.add_uint32(key, value) if 0 <= value < 2**32 else writer.add_int64(key, value)
    elif isinstance(value, float):
        writer.add_float32(key, value)
    elif isinstance(value, str):
        writer.add_string(key, value)
    elif isinstance(value, list):
        writer.add_array(key, value)
    else:
        raise TypeError(f"unsupported KV value for {key}: {type(value).__name__}")


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_source_gguf(spec: ModelSpec, path: Path, seed: int = 7,
                      split_max_tensors: int = 0) -> Path:
    """The source model as one GGUF file (same tensors and data as the package), or, with
    `split_max_tensors`, as a split set the way gguf-py splits (`<stem>-0000i-of-0000N.gguf`,
    split.* keys in every shard); returns the (first) file."""
    kv = {"general.name": spec.name, **spec.kv}
    _write_gguf(path, spec.arch, kv, spec.tensors, seed, split_max_tensors)
    if not split_max_tensors:
        return path
    shards = sorted(path.parent.glob(f"{path.stem}-00001-of-*.gguf"))
    return shards[0]


def default_generation(spec: ModelSpec) -> dict[str, Any] | None:
    """Generation defaults a careful publisher would declare for this model."""
    if spec.arch != "glm-dsa":
        return None
    return {
        "policy": {
            "profile": "glm-dsa-v1", "decode": "compact-flash", "short_prefill": "dense",
            "long_prefill": "sparse-chunked", "verify": "auto", "indexshare": "required",
            "experimental": {"selected_row_flash": "evidence-gated",
                             "moe_weighted_down": "evidence-gated",
                             "moe_merged_shared_gate_up": "evidence-gated"},
        },
        "thresholds": {"short_prefill_max_tokens": 2048, "compact_flash_min_kv": 1,
                       "dense_mask_max_bytes": 268435456},
        "speculative_decoding": {
            "default": "mtp",
            "proposers": {
                "mtp-head": {"type": "native-mtp", "prediction_depth": 1,
                             "layer_indices": list(spec.nextn_layers)},
                "suffix": {"type": "ngram-suffix", "ngram_min": 3, "ngram_max": 8,
                           "max_proposal_tokens": 16, "history_scope": "request"},
            },
            "strategies": {
                "mtp": {"type": "native-mtp", "proposer": "mtp-head",
                        "window_policy": {"default": "adaptive", "min_window": 1,
                                          "initial_window": 1, "max_window": 2,
                                          "pipeline_depth": 1}},
                "mtp-suffix": {"type": "composite", "primary": "mtp-head", "extender": "suffix",
                               "extension_policy": {"max_tokens": 8, "initial_tokens": 2,
                                                    "tail_backoff_proposals": 1}},
            },
        },
    }


def render_readme(manifest: dict[str, Any], manifest_sha256: str) -> str:
    """A model card holding every item package.md asks for."""
    src = manifest["source_model"]
    gen = manifest.get("generation") or {}
    spec_dec = gen.get("speculative_decoding") or {}
    default = spec_dec.get("default")
    lines = [
        f"# {manifest['model_id']} (mesh-llm layer package)", "",
        f"- Source model: {src.get('repo')} at revision {src.get('revision')}",
        f"- Source artifact: {src['path']} (sha256 {src['sha256']})",
        f"- Manifest: model-package.json (sha256 {manifest_sha256})",
        f"- Layer count: {manifest['layer_count']}",
        f"- Activation width: {manifest['activation_width']}",
        f"- Skippy ABI version: {manifest['skippy_abi_version']}",
    ]
    for p in manifest.get("projectors", []):
        lines.append(f"- Projector: {p['path']} (sha256 {p['sha256']})")
    if default:
        strat = spec_dec["strategies"][default]
        proposer = spec_dec.get("proposers", {}).get(strat.get("proposer"), strat)
        lines.append(f"- Generation defaults: speculative strategy {default} "
                     f"(native MTP, prediction depth {proposer.get('prediction_depth')})")
    else:
        lines.append("- Generation defaults: none declared")
    lines += [
        "", "## Validation", "",
        "`meshcert models certify hf://<repo>@<sha> --package-only --report-out cert.json`: "
        "passed",
        "", "## Certification notes", "",
        "Model-family certification: tiny random-weight fixture written by meshcert; not for "
        "inference quality.", "",
    ]
    return "\n".join(lines)


def write_package(
    spec: ModelSpec,
    root: str | os.PathLike[str],
    *,
    source_dir: str | os.PathLike[str] | None = None,
    generation: dict[str, Any] | None | bool = True,
    readme: bool = True,
    seed: int = 7,
    mutate_manifest: Callable[[dict[str, Any]], None] | None = None,
) -> PackageInfo:
    """Write spec's source GGUF (under source_dir, else a temporary folder) and split it with
    the writer (`meshcert package write --format v1`) into a layer package under `root`.

    `generation=True` declares the defaults for the architecture; a dict declares that dict;
    None/False declares none. `mutate_manifest` edits the manifest before it is written again
    (with its model card).
    """
    from meshcert.writer.write import write_file

    out = Path(root)
    with tempfile.TemporaryDirectory(prefix="meshcert-source-") as tmp:
        folder = Path(source_dir) if source_dir is not None else Path(tmp)
        source = write_source_gguf(spec, folder / spec.source_file, seed)
        result = write_file(source, out, fmt="v1", model_id=spec.model_id,
                            source_repo=spec.source_repo or None, source_revision="main",
                            abi_version=ABI_VERSION, readme=False)
    manifest = dict(result.manifest)
    gen = default_generation(spec) if generation is True else (generation or None)
    manifest.pop("generation", None)  # the writer's own MTP defaults give way to these
    if gen:
        items = list(manifest.items())
        at = list(manifest).index("activation_width") + 1  # where the real writer puts it
        manifest = dict([*items[:at], ("generation", gen), *items[at:]])
    if mutate_manifest is not None:
        mutate_manifest(manifest)
    write_manifest_and_card(out, manifest, render_readme if readme else None)
    files = {a.path: out / a.path for a in result.plan.all_artifacts()}
    return PackageInfo(out, manifest, spec, source if source_dir is not None else None, files)


def write_manifest_and_card(out: Path, manifest: dict[str, Any],
                            card: Callable[[dict[str, Any], str], str] | None) -> None:
    """model-package.json (pretty JSON + newline) and, when `card` is given, the README it
    renders from the manifest and the manifest's sha256."""
    raw = (json.dumps(manifest, indent=2) + "\n").encode()
    (out / "model-package.json").write_bytes(raw)
    if card is not None:
        (out / "README.md").write_text(card(manifest, hashlib.sha256(raw).hexdigest()),
                                       encoding="utf-8")
