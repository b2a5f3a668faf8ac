"""Stage selection and planning (pure): which parts each stage fetches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from meshcert.certify.manifest_model import ArtifactEntry, is_int


def layer_range(start: int, end: int) -> str:
    """The one way meshcert writes a layer range, the `--layers` flag's: half-open `A..B`,
    layers A to B-1 (mesh-llm's stage ranges). Plan, `--layers`, `--stage`, progress, the
    reports and cert.json's text all go through it."""
    return f"{start}..{end}"


@dataclass(frozen=True)
class StageRange:
    stage_id: str
    layer_start: int
    layer_end: int  # exclusive

    @property
    def layers(self) -> str:
        return layer_range(self.layer_start, self.layer_end)

    def include_embeddings(self) -> bool:
        return self.layer_start == 0

    def include_output(self, layer_count: int) -> bool:
        return self.layer_end == layer_count



def stage_count_exceeds(layer_count: int, n_stages: int) -> bool:
    """More stages than layers: at least one stage would hold no layer."""
    return n_stages > layer_count


def certification_ranges(layer_count: int) -> list[StageRange]:
    """mesh-llm's two fixed certification ranges: [0, L/2) and [L/2, L)."""
    half = layer_count // 2
    return [StageRange("cert-stage-0", 0, half), StageRange("cert-stage-1", half, layer_count)]


def plan_stages(layer_count: int, n_stages: int) -> list[StageRange]:
    """The package tool's plan: base = L // N, and the first L % N stages get one extra.

    No plan at all (an empty list) unless 1 <= N <= L: a stage holds at least one layer, and
    a plan with fewer stages than asked for is a different plan (mesh-llm's preflight refuses
    N > L as `stage_count_exceeds_layer_count`)."""
    if n_stages <= 0 or layer_count <= 0 or stage_count_exceeds(layer_count, n_stages):
        return []
    base, extra = divmod(layer_count, n_stages)
    out, start = [], 0
    for i in range(n_stages):
        size = base + (1 if i < extra else 0)
        out.append(StageRange(f"stage-{i}", start, start + size))
        start += size
    return out


def stage_parts(entries: list[ArtifactEntry], package_format: str | None, stage: StageRange,
                layer_count: int) -> list[ArtifactEntry]:
    """The parts a stage fetches, by the selection rule of the package's format."""
    if package_format == "v2":
        return select_v2_parts(entries, stage, layer_count)
    return select_entries(entries, stage, layer_count)


def select_v2_parts(entries: list[ArtifactEntry], stage: StageRange, layer_count: int
                    ) -> list[ArtifactEntry]:
    """mesh-llm's v2 selection: the carrier; shared/common.gguf always (meshcert also takes
    its -partNN splits, which mesh-llm cannot select yet); shared/embeddings.gguf only at the
    input boundary; the layer artifacts (and their -partMM splits) whose ordinal is in range;
    shared/output.gguf only at the final boundary; sidecars with the first stage."""
    first, last = stage.include_embeddings(), stage.include_output(layer_count)
    parts: list[ArtifactEntry] = []
    for entry in entries:
        role = entry.role
        ordinal = entry.layer_index
        if (role in ("shared.metadata", "shared.common")
                or (role == "shared.embeddings" and first)
                or (role == "shared.output" and last)
                or (role == "projector" and stage.layer_start == 0)
                or (role == "layer" and ordinal is not None
                    and stage.layer_start <= ordinal < stage.layer_end)):
            parts.append(entry)
    return parts


def select_entries(entries: list[ArtifactEntry], stage: StageRange, layer_count: int,
                   projector_path: str | None = None) -> list[ArtifactEntry]:
    """v1: metadata always; embeddings at the input boundary; its layers; output at the final
    boundary; stage 0 takes the first mmproj projector (or an explicit one)."""
    by_role = {e.role: e for e in entries if e.role.startswith("shared.")}
    parts: list[ArtifactEntry] = []
    if "shared.metadata" in by_role:
        parts.append(by_role["shared.metadata"])
    if stage.include_embeddings() and "shared.embeddings" in by_role:
        parts.append(by_role["shared.embeddings"])
    seen: set[int] = set()
    for entry in entries:
        idx = entry.raw.get("layer_index")
        if (entry.role == "layer" and is_int(idx)
                and stage.layer_start <= idx < stage.layer_end and idx not in seen):
            parts.append(entry)
            seen.add(idx)
    if stage.include_output(layer_count) and "shared.output" in by_role:
        parts.append(by_role["shared.output"])
    if stage.layer_start == 0:
        projectors = [e for e in entries if e.role == "projector"]
        chosen = None
        if projector_path is not None:
            chosen = next((p for p in projectors if p.path == projector_path), None)
        else:
            chosen = next((p for p in projectors if p.raw.get("kind") == "mmproj"), None)
        if chosen is not None:
            parts.append(chosen)
    return parts


def hashing_shares(loads: Sequence[Sequence[tuple[str, int | None]]]) -> list[list[str]]:
    """Each artifact to exactly one stage for hashing, from what each stage loads
    (path, declared bytes): a path one stage loads goes to that stage; a path several stages
    load (v2 shared/common, v1 metadata) goes to the one of them with the fewest bytes to hash
    so far, the largest such path first, ties to the lowest stage. A function of the plan only,
    so the launcher (from the plan) and each slice (from the manifest) get the same answer."""
    loaders: dict[str, list[int]] = {}
    sizes: dict[str, int] = {}
    for index, parts in enumerate(loads):
        for path, size in parts:
            if index not in loaders.setdefault(path, []):
                loaders[path].append(index)
            sizes[path] = max(sizes.get(path, 0), size or 0)
    shares: list[list[str]] = [[] for _ in loads]
    totals = [0] * len(loads)
    for path, owners in loaders.items():
        if len(owners) == 1:
            shares[owners[0]].append(path)
            totals[owners[0]] += sizes[path]
    shared = sorted((p for p, owners in loaders.items() if len(owners) > 1),
                    key=lambda p: (-sizes[p], p))
    for path in shared:
        owner = min(loaders[path], key=lambda i: (totals[i], i))
        shares[owner].append(path)
        totals[owner] += sizes[path]
    return shares
