"""model-package.json from the plan and the digests taken while writing (pure).

v1 in the real writer's key order (package-v2.md, "What the real v1 writer writes"), with the
real sizes and digests where mesh-llm writes null; v2 as package-v2.md's table with
mesh-llm-0.79.md §1.1's fields in its order, artifacts listed carrier first, then the payload
parts by id, then the projectors, then the publisher files in the order given, sidecars sorted,
`publisher_metadata[]` in the order given, `publisher_defaults` when derived (an empty `{}`
kept), `generation` as `{request_defaults, speculative_decoding}` (meshcert keeps an inferred
MTP declaration beside request defaults; mesh-llm drops it), and the canonical `package_id`
computed by certify's own code. `manifest_bytes` writes it as serde_json's pretty printer does
(two-space indent, UTF-8, f64 fields in serde's spelling), so the file equals mesh-llm's apart
from `created_at_unix_secs` and `generator_version`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from meshcert.certify.formats.package_id import (
    F64,
    canonical_manifest,
    compute_package_id,
    serde_f64,
)
from meshcert.writer.artifact import Artifact, PackagePlan
from meshcert.writer.stream import StreamState

SKIPPY_ABI = "0.1.54"  # the ABI the current mesh-llm writers stamp (Skippy 0.1.53/0.1.54)


@dataclass(frozen=True)
class Identity:
    model_id: str
    repo: str | None = None
    revision: str | None = None
    source_file: str | None = None  # the primary file's name as recorded (default: its own)
    abi_version: str = SKIPPY_ABI
    generator_version: str = "meshcert-splitter"
    created_at: int = 0


def source_files(plan: PackagePlan, identity: Identity, state: StreamState
                 ) -> list[tuple[str, int, str]]:
    """(recorded path, size, sha256) of every source file, primary first."""
    out = []
    for i, f in enumerate(plan.source.files):
        path = f.location if plan.source.kind == "hub" else f.name
        if i == 0 and identity.source_file:
            path = identity.source_file
        out.append((path, f.size, state.source_sha256[i]))
    return out


def activation_width(plan: PackagePlan) -> int | None:
    return plan.source.kv_int("embedding_length")


def _artifact_sha(state: StreamState, artifact: Artifact) -> str:
    return state.artifacts[artifact.path].sha256


def build_manifest(plan: PackagePlan, identity: Identity, state: StreamState
                   ) -> dict[str, Any]:
    if plan.format == "v1":
        return _v1(plan, identity, state)
    return _v2(plan, identity, state)


def _v1_entry(a: Artifact, state: StreamState) -> dict[str, Any]:
    count, nbytes = ((a.projector.tensor_count, a.projector.tensor_bytes) if a.projector
                     else (len(a.placements), a.tensor_bytes))
    return {"path": a.path, "tensor_count": count, "tensor_bytes": nbytes,
            "artifact_bytes": a.size, "sha256": _artifact_sha(state, a)}


def _v1(plan: PackagePlan, identity: Identity, state: StreamState) -> dict[str, Any]:
    files = source_files(plan, identity, state)
    primary = plan.source.primary
    source: dict[str, Any] = {"path": primary.location if plan.source.kind == "local" else
                              f"hf://{plan.source.repo}@{plan.source.revision}/"
                              f"{primary.location}",
                              "sha256": files[0][2]}
    if identity.repo:
        source["repo"] = identity.repo
    if identity.revision:
        source["revision"] = identity.revision
    source["primary_file"] = files[0][0]
    source["files"] = [{"path": p, "size_bytes": size, "sha256": sha} for p, size, sha in files]
    by_role = {a.role: a for a in plan.artifacts if a.role.startswith("shared.")}
    manifest: dict[str, Any] = {
        "schema_version": 1, "model_id": identity.model_id, "source_model": source,
        "format": "layer-package", "layer_count": plan.layer_count,
        "activation_width": activation_width(plan),
    }
    if plan.mtp_layers:  # the writer's shape: a proposer AND a strategy repeating its fields
        fields = {"prediction_depth": 1, "layer_indices": list(plan.mtp_layers)}
        manifest["generation"] = {"speculative_decoding": {
            "default": "mtp",
            "proposers": {"mtp": {"type": "native-mtp", **fields}},
            "strategies": {"mtp": {"type": "native-mtp", "proposer": "mtp", **fields}}}}
    manifest["shared"] = {name: _v1_entry(by_role[f"shared.{name}"], state)
                          for name in ("metadata", "embeddings", "output")}
    projectors = [{**_v1_entry(a, state), "kind": "mmproj"}
                  for a in plan.artifacts if a.role == "projector"]
    if projectors:
        manifest["projectors"] = projectors
    manifest["layers"] = [{"layer_index": a.layer_index, **_v1_entry(a, state)}
                          for a in plan.artifacts if a.role == "layer"]
    manifest["skippy_abi_version"] = identity.abi_version
    manifest["created_at_unix_secs"] = identity.created_at
    return manifest


def _v2(plan: PackagePlan, identity: Identity, state: StreamState) -> dict[str, Any]:
    files = source_files(plan, identity, state)
    source: dict[str, Any] = {"sha256": files[0][2], "metadata_artifact_id": "metadata"}
    if identity.repo:
        source["repo"] = identity.repo
    if identity.revision:
        source["revision"] = identity.revision
    source["primary_file"] = files[0][0]
    source["files"] = [{"path": p, "byte_size": size, "sha256": sha} for p, size, sha in files]
    entries = [{"id": a.artifact_id, "path": a.path, "byte_size": a.size,
                "sha256": _artifact_sha(state, a)} for a in plan.all_artifacts()]
    manifest: dict[str, Any] = {
        "schema_version": 2, "package_id": "", "model_id": identity.model_id,
        "source_model": source, "format": "gguf", "layer_count": plan.layer_count,
        "artifact_catalog": {"entries": entries},
    }
    sidecars = sorted(({"kind": "mmproj", "artifact_id": a.artifact_id,
                        "name": plan.sidecar_names[a.artifact_id]}
                       for a in plan.artifacts if a.role == "projector"),
                      key=lambda s: (s["kind"], s["name"], s["artifact_id"]))
    if sidecars:
        manifest["sidecars"] = sidecars
    if plan.publisher_entries:
        manifest["publisher_metadata"] = [dict(e) for e in plan.publisher_entries]
    if plan.publisher_defaults is not None:
        manifest["publisher_defaults"] = {slot: dict(d)
                                          for slot, d in plan.publisher_defaults.items()}
    generation: dict[str, Any] = {}
    if plan.request_defaults is not None:
        generation["request_defaults"] = serde_request_defaults(plan.request_defaults)
    if plan.mtp_layers:  # native MTP (kept beside request_defaults: see the module doc)
        generation["speculative_decoding"] = {
            "default": "mtp", "strategies": {"mtp": {
                "type": "native-mtp", "prediction_depth": 1,
                "layer_indices": [plan.layer_count - 1],
                "window_policy": {"default": "fixed", "initial_window": 1, "min_window": 1,
                                  "max_window": 1}}}}
    if generation:
        manifest["generation"] = generation
    manifest |= {"native_abi_version": identity.abi_version,
                 "generator_version": identity.generator_version,
                 "created_at_unix_secs": identity.created_at}
    manifest["package_id"] = compute_package_id(manifest)
    return manifest


def serde_request_defaults(value: dict[str, Any]) -> Any:
    """`generation.request_defaults` as mesh-llm's structs serialize it: fields in struct
    order, absent ones skipped, profiles and logit_bias by key, f64 fields as F64."""
    canonical = canonical_manifest({"generation": {"request_defaults": value}})
    return canonical["generation"]["request_defaults"]


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """The manifest file as serde_json's `to_string_pretty` writes it, plus a newline."""
    return (_pretty(manifest, "") + "\n").encode("utf-8")


def _pretty(value: Any, indent: str) -> str:
    inner = indent + "  "
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(str(k), ensure_ascii=False)}: {_pretty(v, inner)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list | tuple):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(inner + _pretty(v, inner) for v in value) + "\n" + indent + "]"
    if isinstance(value, F64):
        return serde_f64(value)
    return json.dumps(value, ensure_ascii=False)
