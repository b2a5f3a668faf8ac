"""model-package.json from the plan and the digests taken while writing (pure).

v1 in the real writer's key order (package-v2.md, "What the real v1 writer writes"), with the
real sizes and digests where mesh-llm writes null; v2 as package-v2.md's table, artifacts
listed carrier first, then the payload parts by id, then the projectors, sidecars sorted, and
the canonical `package_id` computed by certify's own code.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from certify.formats.package_id import compute_package_id
from splitter.artifact import Artifact, PackagePlan
from splitter.stream import StreamState

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
    if plan.mtp_layers:  # the v2 writer emits generation only for native MTP
        manifest["generation"] = {"speculative_decoding": {
            "default": "mtp", "strategies": {"mtp": {
                "type": "native-mtp", "prediction_depth": 1,
                "layer_indices": [plan.layer_count - 1],
                "window_policy": {"default": "fixed", "initial_window": 1, "min_window": 1,
                                  "max_window": 1}}}}}
    manifest |= {"native_abi_version": identity.abi_version,
                 "generator_version": identity.generator_version,
                 "created_at_unix_secs": identity.created_at}
    manifest["package_id"] = compute_package_id(manifest)
    return manifest
