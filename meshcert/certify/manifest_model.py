"""Tolerant read-only accessors over a parsed manifest dict, for both package formats.

The manifest may be wrong in any way, so nothing here validates: it extracts what is there,
typed loosely, and the checks decide what is wrong. Every function is pure.

`ArtifactEntry` is the format-neutral artifact: the v1 adapter (`artifact_entries`, below)
reads `shared`, `layers[]` and `projectors[]`; the v2 adapter (`meshcert.certify.formats.v2_layout`)
reads `artifact_catalog.entries` and gives each entry a role and a layer ordinal from its path.
Everything downstream (file facts, hashing, Hub metadata, GGUF headers, stages) sees only
roles, paths, declared sizes and digests, so it runs unchanged on both formats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

SHARED_ROLES = ("metadata", "embeddings", "output")


PackageFormat = Literal["v1", "v2"]
V1_SIZE_KEY, V2_SIZE_KEY = "artifact_bytes", "byte_size"


@dataclass(frozen=True)
class ArtifactEntry:
    """One artifact entry as declared.

    role: `shared.metadata`, `shared.embeddings`, `shared.output`, `shared.common` (v2),
    `layer`, `projector` (v1 projector or v2 sidecar), `publisher` (a v2 publisher file that
    publisher_metadata names: not a GGUF) or `other` (a v2 path no consumer knows).
    """

    role: str
    index: int  # position in its list (0 for v1 shared entries)
    raw: dict[str, Any]
    fmt: PackageFormat = "v1"
    ordinal: int | None = None  # v2: the layer ordinal derived from the artifact path

    @property
    def path(self) -> Any:
        return self.raw.get("path")

    @property
    def artifact_id(self) -> str | None:
        if self.fmt == "v2":
            value = self.raw.get("id")
            return value if isinstance(value, str) else None
        return self.role if self.role != "layer" else f"layer:{self.raw.get('layer_index')}"

    @property
    def layer_index(self) -> int | None:
        if self.fmt == "v2":
            return self.ordinal
        value = self.raw.get("layer_index") if self.role == "layer" else None
        return value if is_int(value) else None

    @property
    def declared_size(self) -> int | None:
        return self.declared_int(V2_SIZE_KEY if self.fmt == "v2" else V1_SIZE_KEY)

    @property
    def label(self) -> str:
        if self.fmt == "v2":
            return f"artifact_catalog.entries[{self.index}] (id {self.raw.get('id')!r})"
        if self.role == "layer":
            li = self.raw.get("layer_index")
            return f"layers[{self.index}] (layer_index {li!r})"
        if self.role == "projector":
            return f"projectors[{self.index}]"
        return self.role

    def declared_int(self, name: str) -> int | None:
        value = self.raw.get(name)
        return value if is_int(value) else None

    def declared_sha256(self) -> str | None:
        value = self.raw.get("sha256")
        return value.lower() if isinstance(value, str) else None


def is_int(value: Any) -> TypeGuard[int]:
    """JSON integers only (bool is not an int here, nor is 3.0)."""
    return isinstance(value, int) and not isinstance(value, bool)


def package_format(manifest: dict[str, Any] | None) -> PackageFormat | None:
    """`schema_version` 1 -> v1, 2 -> v2 (integers only); anything else is unsupported."""
    if manifest is None:
        return None
    version = manifest.get("schema_version")
    if is_int(version) and version in (1, 2):
        return "v1" if version == 1 else "v2"
    return None


def layer_count(manifest: dict[str, Any]) -> int | None:
    value = manifest.get("layer_count")
    return value if is_int(value) and value >= 0 else None


def artifact_entries(manifest: dict[str, Any]) -> list[ArtifactEntry]:
    """Every dict-shaped artifact entry in shared, layers[] and projectors[], in order."""
    out: list[ArtifactEntry] = []
    shared = manifest.get("shared")
    if isinstance(shared, dict):
        for name in SHARED_ROLES:
            entry = shared.get(name)
            if isinstance(entry, dict):
                out.append(ArtifactEntry(f"shared.{name}", 0, entry))
    for role, key in (("layer", "layers"), ("projector", "projectors")):
        items = manifest.get(key)
        if isinstance(items, list):
            out.extend(ArtifactEntry(role, i, e)
                       for i, e in enumerate(items) if isinstance(e, dict))
    return out


def generation(manifest: dict[str, Any]) -> dict[str, Any] | None:
    value = manifest.get("generation")
    return value if isinstance(value, dict) else None
