"""Package v2 artifacts as format-neutral `ArtifactEntry`s (pure).

A v2 manifest lists artifacts in `artifact_catalog.entries` with no roles: the role comes from
the path layout the writer uses (package-v2.md), the layer ordinal from
`layers/layer-<N>[-partMM].gguf`. The metadata carrier is the artifact named by
`source_model.metadata_artifact_id`; sidecars are the artifacts `sidecars[]` name; publisher
artifacts (role `publisher`: metadata/config.json, ...) are the ones `publisher_metadata[]`
names, by id as mesh-llm does (mesh-llm-0.79.md §1.8): not GGUFs, not payload parts, never
selected by a stage, checked by size and SHA-256 only.
"""

from __future__ import annotations

import re
from typing import Any

from meshcert.certify.formats.publisher import publisher_artifact_ids
from meshcert.certify.manifest_model import ArtifactEntry

LAYER_PATH = re.compile(r"^layers/layer-(?P<n>\d+)(?:-part\d+)?\.gguf$")
COMMON_PART_PATH = re.compile(r"^shared/common-part\d+\.gguf$")
ROLE_BY_PATH = {
    "shared/embeddings.gguf": "shared.embeddings",
    "shared/output.gguf": "shared.output",
    "shared/common.gguf": "shared.common",
}
# the non-layer paths mesh-llm's certifier selects; any other non-layer artifact fails there
MESH_SELECTABLE_SHARED = frozenset(ROLE_BY_PATH)
PUBLISHER_ROLE = "publisher"
# roles that are no payload part (`skippy.package.tensor_part` indexes the others)
NOT_PAYLOAD_ROLES = frozenset({"shared.metadata", "projector", PUBLISHER_ROLE})


def catalog_entries(manifest: dict[str, Any]) -> list[dict[str, Any]]:
    artifact_catalog = manifest.get("artifact_catalog")
    entries = artifact_catalog.get("entries") if isinstance(artifact_catalog, dict) else None
    return [e for e in entries if isinstance(e, dict)] if isinstance(entries, list) else []


def metadata_artifact_id(manifest: dict[str, Any]) -> str | None:
    source = manifest.get("source_model")
    value = source.get("metadata_artifact_id") if isinstance(source, dict) else None
    return value if isinstance(value, str) else None


def sidecar_ids(manifest: dict[str, Any]) -> set[str]:
    sidecars = manifest.get("sidecars")
    if not isinstance(sidecars, list):
        return set()
    return {s["artifact_id"] for s in sidecars
            if isinstance(s, dict) and isinstance(s.get("artifact_id"), str)}


def layer_ordinal(path: Any) -> int | None:
    match = LAYER_PATH.match(path) if isinstance(path, str) else None
    return int(match["n"]) if match else None


def role_of(path: Any, artifact_id: Any, metadata_id: str | None, sidecars: set[str],
            publisher: frozenset[str] | set[str] = frozenset()) -> str:
    if isinstance(artifact_id, str) and artifact_id == metadata_id:
        return "shared.metadata"
    if isinstance(artifact_id, str) and artifact_id in sidecars:
        return "projector"
    if isinstance(artifact_id, str) and artifact_id in publisher:
        return PUBLISHER_ROLE
    if not isinstance(path, str):
        return "other"
    if path in ROLE_BY_PATH:
        return ROLE_BY_PATH[path]
    if COMMON_PART_PATH.match(path):
        return "shared.common"
    if layer_ordinal(path) is not None:
        return "layer"
    return "other"  # includes a projectors/ file no sidecar names: mesh-llm cannot select it


def v2_artifact_entries(manifest: dict[str, Any]) -> list[ArtifactEntry]:
    metadata_id = metadata_artifact_id(manifest)
    sidecars = sidecar_ids(manifest)
    publisher = publisher_artifact_ids(manifest)
    out: list[ArtifactEntry] = []
    for i, entry in enumerate(catalog_entries(manifest)):
        path = entry.get("path")
        role = role_of(path, entry.get("id"), metadata_id, sidecars, publisher)
        out.append(ArtifactEntry(role, i, entry, fmt="v2",
                                 ordinal=layer_ordinal(path) if role == "layer" else None))
    return out


def payload_entries(entries: list[ArtifactEntry]) -> list[ArtifactEntry]:
    """The artifacts `skippy.package.tensor_part` indexes: every artifact but the carrier,
    the sidecars and the publisher artifacts, sorted by id (entries without a string id
    cannot be indexed and are left out)."""
    payload = [e for e in entries if e.role not in NOT_PAYLOAD_ROLES
               and e.artifact_id is not None]  # "projector" is given to sidecars only
    return sorted(payload, key=lambda e: e.artifact_id or "")
