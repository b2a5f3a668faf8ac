"""What `meshcert package plan` shows: the artifacts `package write` would write (exact bytes)
and what each node of an N-stage split would fetch, by certify's own stage rules (the package
tool's plan: base = L // N, the first L % N stages one layer more; v1 and v2 selection as
`models certify --stages`). The JSON schema is docs/package-plan.schema.json, generated from
these models (`python -m splitter.plan_report > docs/package-plan.schema.json`)."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from certify.formats.v2_layout import v2_artifact_entries
from certify.manifest_model import ArtifactEntry, artifact_entries
from certify.stages import plan_stages, stage_parts
from splitter.artifact import Artifact, PackagePlan


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


def _entries(plan: PackagePlan) -> list[ArtifactEntry]:
    """The planned artifacts as certify's format-neutral entries (paths and sizes only)."""
    if plan.format == "v2":
        projectors = [a for a in plan.artifacts if a.role == "projector"]
        manifest: dict[str, Any] = {
            "source_model": {"metadata_artifact_id": "metadata"},
            "artifact_catalog": {"entries": [{"id": a.artifact_id, "path": a.path,
                                              "byte_size": a.size}
                                             for a in plan.all_artifacts()]},
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
        stages=fetches)


def plan_json_schema() -> dict[str, Any]:
    return PackagePlanReport.model_json_schema()


if __name__ == "__main__":
    print(json.dumps(plan_json_schema(), indent=2, sort_keys=True))
