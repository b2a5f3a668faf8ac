"""What `meshcert package plan` shows: the artifacts `package write` would write (exact bytes)
and what each node of an N-stage split would fetch, by certify's own stage rules (the package
tool's plan: base = L // N, the first L % N stages one layer more; v1 and v2 selection as
`models certify --stages`). The JSON schema is docs/package-plan.schema.json, generated from
these models (`python3 scripts/generate.py package-plan-schema`)."""

from __future__ import annotations

import hashlib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from meshcert.certify.formats.v2_layout import v2_artifact_entries
from meshcert.certify.manifest_model import ArtifactEntry, artifact_entries
from meshcert.certify.stages import plan_stages, stage_parts
from meshcert.writer.artifact import Artifact, PackagePlan


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PlannedArtifact(_Model):
    id: str
    path: str
    role: str = Field(description="shared.metadata, shared.embeddings, shared.output, "
                      "shared.common, layer or projector")
    layer_index: int | None = None
    tensor_count: int
    tensor_bytes: int
    byte_size: int = Field(description="Exact file size, header and padding included.")


class SourceFileSize(_Model):
    path: str
    byte_size: int


class StageFetch(_Model):
    stage_id: str
    layer_start: int
    layer_end: int = Field(description="Exclusive.")
    artifacts: list[str] = Field(description="Paths this node fetches.")
    byte_size: int


class PlannedPublisherFile(_Model):
    role: str = Field(description="model_config, generation_config, tokenizer_config, "
                      "chat_template or hf_quant_config")
    artifact_id: str
    path: str
    source_path: str
    byte_size: int
    sha256: str
    picked_up: bool = Field(description="Found at the Hub source's revision (not named by "
                            "--publisher-metadata).")


class PlannedDtype(_Model):
    dtype: str
    artifact_id: str
    json_path: str


class PlannedPublisherDefaults(_Model):
    compute_dtype: PlannedDtype | None = None
    kv_cache_dtype: PlannedDtype | None = None


class PlannedRequestDefaults(_Model):
    default: str
    reasoning_enabled: str | None = None
    reasoning_disabled: str | None = None
    profiles: list[str]


class PackagePlanReport(_Model):
    schema_version: Literal[1] = 1
    format: Literal["v1", "v2"]
    source: str
    source_files: list[SourceFileSize]
    architecture: str
    layer_count: int
    alignment: int
    max_artifact_bytes: int | None = Field(description="The v2 part budget (None for v1).")
    total_bytes: int
    artifacts: list[PlannedArtifact]
    stages: list[StageFetch]
    publisher_metadata: list[PlannedPublisherFile] = Field(
        default_factory=list, description="v2: publisher_metadata[] in manifest order.")
    publisher_defaults: PlannedPublisherDefaults | None = Field(
        default=None, description="v2: publisher_defaults as it will be written (None: "
        "absent).")
    request_defaults: PlannedRequestDefaults | None = Field(
        default=None, description="v2: generation.request_defaults (--generation-defaults).")
    speculative_decoding: str | None = Field(
        default=None, description="The native MTP strategy written (kept beside "
        "request_defaults).")


def _entries(plan: PackagePlan) -> list[ArtifactEntry]:
    """The planned artifacts as certify's format-neutral entries (paths and sizes only)."""
    if plan.format == "v2":
        projectors = [a for a in plan.artifacts if a.role == "projector"]
        manifest: dict[str, Any] = {
            "source_model": {"metadata_artifact_id": "metadata"},
            "artifact_catalog": {"entries": [{"id": a.artifact_id, "path": a.path,
                                              "byte_size": a.size}
                                             for a in plan.all_artifacts()
                                             if a.publisher is None]},
            "sidecars": [{"kind": "mmproj", "artifact_id": a.artifact_id} for a in projectors]}
        return v2_artifact_entries(manifest)

    def entry(a: Artifact) -> dict[str, Any]:
        return {"path": a.path, "artifact_bytes": a.size}

    by_role = {a.role: a for a in plan.artifacts}
    return artifact_entries({
        "shared": {n: entry(by_role[f"shared.{n}"]) for n in ("metadata", "embeddings",
                                                              "output")},
        "layers": [{"layer_index": a.layer_index, **entry(a)} for a in plan.artifacts
                   if a.role == "layer"],
        "projectors": [{"kind": "mmproj", **entry(a)} for a in plan.artifacts
                       if a.role == "projector"]})


def plan_report(plan: PackagePlan, stages: int, *, source: str,
                max_artifact_bytes: int | None) -> PackagePlanReport:
    sizes = {a.path: a.size for a in plan.all_artifacts()}
    entries = _entries(plan)
    fetches = []
    for stage in plan_stages(plan.layer_count, stages):
        paths = [str(e.path) for e in stage_parts(entries, plan.format, stage,
                                                  plan.layer_count)]
        fetches.append(StageFetch(stage_id=stage.stage_id, layer_start=stage.layer_start,
                                  layer_end=stage.layer_end, artifacts=paths,
                                  byte_size=sum(sizes[p] for p in paths)))
    return PackagePlanReport(
        format=plan.format, source=source,
        source_files=[SourceFileSize(path=f.location if plan.source.kind == "hub" else f.name,
                                     byte_size=f.size) for f in plan.source.files],
        architecture=plan.source.architecture, layer_count=plan.layer_count,
        alignment=plan.source.alignment,
        max_artifact_bytes=max_artifact_bytes if plan.format == "v2" else None,
        total_bytes=plan.total_bytes,
        artifacts=[PlannedArtifact(id=a.artifact_id, path=a.path, role=a.role,
                                   layer_index=a.layer_index, tensor_count=len(a.placements),
                                   tensor_bytes=a.tensor_bytes, byte_size=a.size)
                   for a in plan.all_artifacts()],
        stages=fetches, **_publisher_fields(plan))


def _publisher_fields(plan: PackagePlan) -> dict[str, Any]:
    """What the plan adds beside the GGUFs (nodes never fetch these: no stage lists them)."""
    files = {a.artifact_id: a for a in plan.artifacts if a.publisher is not None}
    out: dict[str, Any] = {"publisher_metadata": [
        PlannedPublisherFile(role=e["role"], artifact_id=e["artifact_id"],
                             path=files[e["artifact_id"]].path, source_path=e["source_path"],
                             byte_size=files[e["artifact_id"]].size,
                             sha256=_sha256(files[e["artifact_id"]]),
                             picked_up=_picked_up(files[e["artifact_id"]]))
        for e in plan.publisher_entries]}
    if plan.publisher_defaults is not None:
        out["publisher_defaults"] = PlannedPublisherDefaults(
            **{slot: PlannedDtype(**d) for slot, d in plan.publisher_defaults.items()})
    rd = plan.request_defaults
    if rd is not None:
        selection = rd.get("selection") or {}
        out["request_defaults"] = PlannedRequestDefaults(
            default=selection.get("default", ""),
            reasoning_enabled=selection.get("reasoning_enabled"),
            reasoning_disabled=selection.get("reasoning_disabled"),
            profiles=sorted(rd.get("profiles") or {}))
    if plan.format == "v2" and plan.mtp_layers:
        out["speculative_decoding"] = f"native-mtp, layer {plan.layer_count - 1}"
    return out


def _sha256(a: Artifact) -> str:
    assert a.publisher is not None
    return hashlib.sha256(a.publisher.data).hexdigest()


def _picked_up(a: Artifact) -> bool:
    return a.publisher is not None and a.publisher.picked_up


def plan_json_schema() -> dict[str, Any]:
    return PackagePlanReport.model_json_schema()
