"""Tolerant read-only accessors over a parsed manifest dict.

The manifest may be wrong in any way, so nothing here validates: it extracts what is there,
typed loosely, and the checks decide what is wrong. Every function is pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

SHARED_ROLES = ("metadata", "embeddings", "output")


@dataclass(frozen=True)
class ArtifactEntry:
    """One artifact entry as declared: role is `shared.<name>`, `layer` or `projector`."""

    role: str
    index: int  # position in its list (0 for shared entries)
    raw: dict[str, Any]

    @property
    def path(self) -> Any:
        return self.raw.get("path")

    @property
    def layer_index(self) -> int | None:
        value = self.raw.get("layer_index") if self.role == "layer" else None
        return value if is_int(value) else None

    @property
    def label(self) -> str:
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
