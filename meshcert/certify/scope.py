"""Certify one node's slice (pure): `--layers A..B` / `--stage I/N` -> the artifacts it verifies.

A mesh node loads only its stage's parts, so it can verify exactly those: the selection follows
the stage rules of `meshcert.certify.stages` (metadata always, embeddings when A = 0, the layers in
range, output when B = L, v2's shared/common always). For certification, the stage that starts at
layer 0 also takes every projector/sidecar and every artifact no stage loads (v2 roles `other` and
`publisher`), so that the N slices of a plan together cover every declared artifact.

With `--hash-once` (`--stage I/N` only), a slice hashes only its share of the plan
(`meshcert.certify.stages.hashing_shares`): every artifact is hashed by exactly one of the N
slices, and an artifact several stages load (shared/common) is still checked by each of them
(size, GGUF header) but hashed by one; `report merge` takes its digest from that slice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from meshcert.certify.manifest_model import ArtifactEntry, layer_count
from meshcert.certify.stages import (
    StageRange,
    hashing_shares,
    layer_range,
    plan_stages,
    stage_count_exceeds,
    stage_parts,
)

_LAYERS = re.compile(r"^\s*(\d+)\s*\.\.\s*(\d+)\s*$")
_STAGE = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
FIRST_STAGE_EXTRAS = ("projector", "other", "publisher")


@dataclass(frozen=True)
class ScopeRequest:
    """A slice to certify: layers [start, end) (`--layers`), or stage I of the package tool's
    N-stage plan (`--stage I/N`); resolved against the manifest's layer_count."""

    layer_start: int | None = None
    layer_end: int | None = None
    stage_index: int | None = None
    stage_count: int | None = None
    hash_once: bool = False  # --hash-once: hash only this stage's share of the plan

    @property
    def label(self) -> str:
        if self.stage_index is not None:
            return f"--stage {self.stage_index}/{self.stage_count}"
        return f"--layers {layer_range(self.layer_start or 0, self.layer_end or 0)}"


def parse_layers(text: str) -> ScopeRequest:
    """`A..B`, half-open (mesh-llm's stage ranges): layers A to B-1."""
    match = _LAYERS.match(text)
    if not match:
        raise ValueError(f"{text!r} is not A..B (for example 0..12)")
    start, end = int(match[1]), int(match[2])
    if start >= end:
        raise ValueError(f"{text!r} is empty: A must be below B (the range is half-open)")
    return ScopeRequest(layer_start=start, layer_end=end)


def parse_stage(text: str, *, hash_once: bool = False) -> ScopeRequest:
    """`I/N`: stage I (0..N-1) of the package tool's N-stage plan."""
    match = _STAGE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not I/N (for example 0/4)")
    index, count = int(match[1]), int(match[2])
    if count <= 0 or index >= count:
        raise ValueError(f"{text!r}: I must be within 0..N-1 and N > 0")
    return ScopeRequest(stage_index=index, stage_count=count, hash_once=hash_once)


@dataclass(frozen=True)
class Selection:
    """What a run verifies: `paths` None means every artifact (no scope was asked for)."""

    request: ScopeRequest | None = None
    stage: StageRange | None = None
    paths: frozenset[str] | None = None
    problem: str | None = None  # why the scope could not be applied (then nothing is selected)
    # --hash-once: the selected paths this slice hashes (None: every selected path)
    hashed: frozenset[str] | None = None

    def includes(self, path: object) -> bool:
        return self.paths is None or (isinstance(path, str) and path in self.paths)

    def hashes(self, path: object) -> bool:
        """Whether this run hashes the artifact at `path` (when it hashes at all)."""
        return self.includes(path) and (self.hashed is None or path in self.hashed)

    @classmethod
    def resolve(cls, request: ScopeRequest | None, manifest: dict[str, Any] | None,
                package_format: str | None, entries: list[ArtifactEntry]) -> Selection:
        if request is None:
            return cls()
        total = layer_count(manifest) if manifest is not None else None
        if not total:
            return cls(request, None, frozenset(), f"{request.label}: the manifest has no "
                       "usable layer_count, so no layer range can be selected")
        stage, problem = _stage_range(request, total)
        if stage is None:
            return cls(request, None, frozenset(), problem)
        chosen = stage_parts(entries, package_format, stage, total)
        if stage.layer_start == 0:
            chosen += [e for e in entries if e.role in FIRST_STAGE_EXTRAS]
        paths = frozenset(e.path for e in chosen if isinstance(e.path, str))
        hashed = None
        if request.hash_once and request.stage_index is not None and request.stage_count:
            hashed = _hashed_by_stage(paths, entries, package_format, total,
                                      request.stage_count, request.stage_index)
        return cls(request, stage, paths, None, hashed)


def stage_loads(entries: list[ArtifactEntry], package_format: str | None, total: int,
                count: int) -> list[list[tuple[str, int | None]]]:
    """(path, declared bytes) of the parts each stage of the `count`-stage plan loads."""
    return [[(e.path, e.declared_size) for e in stage_parts(entries, package_format, st, total)
             if isinstance(e.path, str)] for st in plan_stages(total, count)]


def _hashed_by_stage(paths: frozenset[str], entries: list[ArtifactEntry],
                     package_format: str | None, total: int, count: int, index: int
                     ) -> frozenset[str]:
    """--hash-once: of the stage's selected `paths`, its share of the loaded parts, plus the
    extras no stage loads (projectors, publisher files: selected by the first stage only)."""
    loads = stage_loads(entries, package_format, total, count)
    share = set(hashing_shares(loads)[index])
    loaded = {path for parts in loads for path, _ in parts}
    return frozenset(p for p in paths if p in share or p not in loaded)


def _stage_range(request: ScopeRequest, total: int) -> tuple[StageRange | None, str | None]:
    if request.stage_index is not None and request.stage_count is not None:
        if stage_count_exceeds(total, request.stage_count):
            return None, (f"{request.label}: a {total}-layer package cannot be split into "
                          f"{request.stage_count} stages (at most one stage per layer)")
        plan = plan_stages(total, request.stage_count)
        if request.stage_index >= len(plan):
            return None, (f"{request.label}: a {request.stage_count}-stage plan has stages "
                          f"0..{len(plan) - 1}")
        return plan[request.stage_index], None
    start, end = request.layer_start, request.layer_end
    if start is None or end is None or not 0 <= start < end <= total:
        return None, (f"{request.label}: the package has layers {layer_range(0, total)} "
                      f"(A < B <= {total})")
    return StageRange(f"layers-{start}-{end}", start, end), None
