"""Merge slice reports into one attestation for the whole package (pure: reports in, report out).

Each mesh node certifies the slice it loads (`--stage I/N` or `--layers A..B`); `report merge`
checks that the slices certify one package (manifest sha256, v2 package_id, hf:// commit) with
the same manifest-wide verdicts, that digests of artifacts two slices both hashed agree, and
which artifacts nobody verified. The merged report is `passed` only when every slice passed and
every declared artifact was verified by some slice; `incomplete` when coverage is missing (or a
slice was incomplete); `failed` when a slice failed or the slices disagree.

A `--hash-once` slice verifies (hashes) only its share of the N-stage plan: an artifact that
slices only checked (size, header) and none hashed is `coverage_missing`, like one no slice read.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from meshcert.certify.engine import INCOMPLETE_CODES, package_only_gates, tool_info
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.report import (
    CertReport,
    CheckRun,
    CheckStatus,
    Coverage,
    DigestCoverage,
    DigestCoverageMode,
    Gate,
    GateStatus,
    MaterializedStage,
    MergeInfo,
    RuntimeGate,
    ScopeCoverage,
    SliceCoverage,
    ToolCoverage,
    VerificationMode,
    combine_statuses,
)
from meshcert.certify.stages import layer_range
from meshcert.core.findings import Finding, finding

MERGE_CHECK = "slice_merge"
MERGE_CODES = frozenset({
    "slice_package_mismatch", "slice_verdict_mismatch", "slice_digest_mismatch",
    "slice_failed", "slice_not_merged", "coverage_missing",
})
# Check groups that look only at the manifest, the README, the listing and the v2 carrier (which
# every slice reads): every slice of one package must reach the same verdict in each.
SCOPE_FREE_CHECKS = frozenset({
    "manifest_json", "manifest_fields", "v2_manifest_root", "source_model", "v2_source_model",
    "skippy_abi", "projectors", "v2_sidecars", "layers", "artifact_entries",
    "v2_artifact_catalog", "undeclared_artifacts", "generation_fields", "generation_policy",
    "generation_thresholds", "generation_evidence", "speculative_decoding", "v2_generation",
    "speculative_proposers", "speculative_strategies", "readme", "v2_carrier",
    "v2_tensor_catalog", "v2_tensor_placement", "v2_mesh_compatibility",
})
_VERIFICATION_STRENGTH: tuple[VerificationMode, ...] = (
    "size-only", "hub-attested", "sha256-streamed", "local-sha256")
_CHECK_RANK: dict[str, int] = {"skipped": 0, "passed": 1, "warning": 2, "failed": 3, "error": 4}


@dataclass(frozen=True)
class Slice:
    """One slice report and the name it is shown under (its file, as given)."""

    name: str
    report: CertReport

    @property
    def layers(self) -> tuple[int, int]:
        scope = self.report.scope
        if scope is not None:
            return scope.layer_start, scope.layer_end
        return 0, self.report.layer_count or 0  # a whole-package report covers everything

    @property
    def artifacts(self) -> list[str]:
        """The artifacts the slice checked (size, header, and with its share, the digest)."""
        scope = self.report.scope
        return scope.artifacts if scope is not None else self.report.declared_artifacts

    @property
    def hashed(self) -> list[str]:
        """The artifacts whose digest the slice verified: with --hash-once its share only."""
        scope = self.report.scope
        if scope is not None and scope.hashed_artifacts is not None:
            return scope.hashed_artifacts
        return self.artifacts


def merge_slices(slices: Sequence[Slice]) -> CertReport:
    """One report for the package from its slice reports (at least one)."""
    if not slices:
        raise ValueError("give at least one slice report")
    ref = slices[0].report
    own = _identity(slices)
    same = [slices[0], *(s for s in slices[1:] if not _other_package(slices[0], s))]
    if len(same) == len(slices):
        own += [*_verdicts(slices), *_digest_conflicts(slices), *_slice_statuses(slices)]
    # else: slices of another package are one finding each; their digests, verdicts and
    # coverage say nothing about this package, so they are not compared (no digest noise)
    declared = ref.declared_artifacts
    verified = {p for s in same for p in s.hashed}
    checked = {p for s in same for p in s.artifacts}
    missing_artifacts = [p for p in declared if p not in verified]
    missing_layers = _uncovered_layers(same, ref.layer_count or 0)
    if (missing_artifacts or missing_layers) and len(same) == len(slices):
        own.append(finding("coverage_missing", _coverage_message(
            missing_layers, [p for p in missing_artifacts if p not in checked],
            [p for p in missing_artifacts if p in checked], len(declared)),
            path=MANIFEST_NAME))
    own = [f.model_copy(update={"check": MERGE_CHECK}) for f in own]
    findings = own + _union_findings(same)
    gate = _gate(findings, slices)
    gates = _runtime_gates(slices)
    status = combine_statuses([gate.status, *(g.status for g in gates
                                              if g.severity == "required")])
    digests = {p: d for s in slices for p, d in s.report.digests.items()}
    hub_digests = {p: d for s in slices for p, d in s.report.hub_digests.items()
                   if p not in digests}
    merge = MergeInfo(
        slices=[SliceCoverage(report=s.name, status=s.report.status, layer_start=s.layers[0],
                              layer_end=s.layers[1],
                              stage=s.report.scope.stage if s.report.scope else None,
                              artifacts=len(s.hashed)) for s in slices],
        verified_artifacts=len([p for p in declared if p in verified]),
        declared_artifacts=len(declared), unverified_layers=missing_layers,
        unverified_artifacts=missing_artifacts)
    return ref.model_copy(update={
        "status": status,
        "input": f"merge of {len(slices)} slice report(s)",
        "local_package_dir": ref.local_package_dir if _same(
            s.report.local_package_dir for s in slices) else None,
        "package_gate": gate,
        "materialized_stages": [_stage(st, verified, findings)
                                for st in ref.materialized_stages],
        "stage_plan": [_stage(st, verified, findings) for st in ref.stage_plan],
        "runtime_gates": gates,
        "findings": findings,
        "checks": _checks(slices, own),
        "tool": tool_info(),
        "started_at": min(s.report.started_at for s in slices),
        "finished_at": max(s.report.finished_at for s in slices),
        "verification": _weakest(s.report.verification for s in slices),
        "transfer": None,
        "scope": None,
        "digests": dict(sorted(digests.items())),
        "cache_hits": min(len(digests), sum(s.report.cache_hits for s in slices)),
        "hub_digests": dict(sorted(hub_digests.items())),
        "git_blobs": dict(sorted({p: b for s in slices
                                  for p, b in s.report.git_blobs.items()}.items())),
        "attestation": None,
        "merge": merge,
        "coverage": merged_coverage(slices, digests, hub_digests, len(declared),
                                    merge.verified_artifacts),
    })


def merged_coverage(slices: Sequence[Slice], digests: dict[str, str],
                    hub_digests: dict[str, str], declared: int, verified: int
                    ) -> Coverage | None:
    """The merged report's coverage: the package (the artifacts some slice verified of those
    declared), its digests by how the slices verified them; None when a slice states none."""
    covs = [s.report.coverage for s in slices]
    if any(c is None for c in covs):
        return None
    known = [c for c in covs if c is not None]
    checked = len({p for s in slices for p in s.artifacts})
    cached = min(sum(c.digests.cached for c in known), len(digests))
    written = min(sum(c.digests.written for c in known), len(digests) - cached)
    sizes = max(0, checked - len(digests) - len(hub_digests))
    mode: DigestCoverageMode = ("none" if checked == 0 else "sizes_only" if sizes else
                                "cache" if cached else "written" if written else
                                "hub_attested" if hub_digests else "hashed")
    ran = next((c.runtime for c in known if c.runtime.status == "ran"), known[0].runtime)
    return Coverage(
        digests=DigestCoverage(mode=mode, artifacts=checked,
                               hashed=len(digests) - cached - written, cached=cached,
                               written=written, hub_attested=len(hub_digests),
                               sizes_only=sizes),
        scope=ScopeCoverage(kind="package", artifacts_checked=verified,
                            artifacts_total=declared),
        runtime=ran, parity=_tool([c.parity for c in known]),
        llama_cpp=_tool([c.llama_cpp for c in known]))


def _tool(values: list[ToolCoverage]) -> ToolCoverage:
    if "ran" in values:
        return "ran"
    return "not_available" if "not_available" in values else "not_asked"


def _same(values: Iterable[object]) -> bool:
    return len(set(values)) <= 1


def _identity(slices: Sequence[Slice]) -> list[Finding]:
    """Every slice must certify the package the first one certifies."""
    first = slices[0]
    out: list[Finding] = []
    for s in slices:
        if s.report.manifest_sha256 is None:
            out.append(finding("slice_not_merged", f"{s.name}: the slice read no manifest, so "
                               "nothing ties it to the package"))
    for s in slices[1:]:
        differ = _other_package(first, s)
        if differ:
            out.append(finding("slice_package_mismatch", f"{s.name} certifies another package "
                               f"than {first.name}: {'; '.join(differ)}"))
    return out


def _other_package(first: Slice, other: Slice) -> list[str]:
    """How `other` names another package than `first` (empty: the same package)."""
    return [f"{field} {theirs!r} ({first.name}: {mine!r})"
            for field, mine, theirs in _identity_fields(first.report, other.report)
            if mine != theirs]


def _identity_fields(a: CertReport, b: CertReport) -> list[tuple[str, object, object]]:
    fields: list[tuple[str, object, object]] = [
        ("manifest_sha256", a.manifest_sha256, b.manifest_sha256),
        ("package_format", a.package_format, b.package_format),
        ("package_id", a.package_id, b.package_id),
        ("layer_count", a.layer_count, b.layer_count),
    ]
    if a.ref is not None and b.ref is not None and a.ref.kind == b.ref.kind == "hf":
        fields += [("hf:// repo", a.ref.repo, b.ref.repo),
                   ("resolved commit", a.ref.resolved_commit, b.ref.resolved_commit)]
    return fields


def _verdict(report: CertReport) -> dict[str, tuple[str, tuple[tuple[str, str | None,
                                                                         int | None], ...]]]:
    by_check: dict[str, list[tuple[str, str | None, int | None]]] = defaultdict(list)
    for f in report.findings:
        if f.check in SCOPE_FREE_CHECKS:
            by_check[f.check].append((f.code, f.path, f.layer_index))
    return {run.name: (run.status, tuple(sorted(by_check.get(run.name, []),
                                                key=lambda k: (k[0], k[1] or "", k[2] or 0))))
            for run in report.checks if run.name in SCOPE_FREE_CHECKS}


def _verdicts(slices: Sequence[Slice]) -> list[Finding]:
    """The manifest-wide checks must agree across slices (same package, same rules)."""
    first = slices[0]
    reference = _verdict(first.report)
    out: list[Finding] = []
    for s in slices[1:]:
        mine = _verdict(s.report)
        differ = sorted(name for name in reference.keys() | mine.keys()
                        if reference.get(name) != mine.get(name))
        if differ:
            out.append(finding("slice_verdict_mismatch", f"{s.name} and {first.name} disagree "
                               f"on the manifest-wide check(s) {', '.join(differ)}"))
    return out


def _digest_conflicts(slices: Sequence[Slice]) -> list[Finding]:
    by_path: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for s in slices:
        for path, digest in s.report.digests.items():
            by_path[path][digest.lower()].append(s.name)
    out: list[Finding] = []
    for path, digests in sorted(by_path.items()):
        if len(digests) > 1:
            seen = "; ".join(f"{', '.join(names)}: {digest}"
                             for digest, names in sorted(digests.items()))
            out.append(finding("slice_digest_mismatch", f"{path} hashed differently by the "
                               f"slices ({seen})", path=path))
    return out


def _slice_statuses(slices: Sequence[Slice]) -> list[Finding]:
    out: list[Finding] = []
    for s in slices:
        if s.report.status == "failed":
            codes = sorted({f.code for f in s.report.findings if f.severity == "error"})
            out.append(finding("slice_failed", f"{s.name} (layers {layer_range(*s.layers)})"
                               f" failed: {', '.join(codes) or s.report.package_gate.details}"))
    return out


def _uncovered_layers(slices: Sequence[Slice], total: int) -> list[int]:
    covered: set[int] = set()
    for s in slices:
        start, end = s.layers
        covered.update(range(start, end))
    return [i for i in range(total) if i not in covered]


def layer_ranges(layers: list[int]) -> str:
    """[0, 1, 2, 5] -> '0..3, 5..6' (half-open, like --layers)."""
    spans: list[tuple[int, int]] = []
    for i in layers:
        if spans and spans[-1][1] == i:
            spans[-1] = (spans[-1][0], i + 1)
        else:
            spans.append((i, i + 1))
    return ", ".join(layer_range(a, b) for a, b in spans)


def _coverage_message(layers: list[int], artifacts: list[str], unhashed: list[str],
                      declared: int) -> str:
    parts = []
    if layers:
        parts.append(f"layers {layer_ranges(layers)} (--layers, half-open)")
    if artifacts:
        parts.append(f"{len(artifacts)} of {declared} artifact(s): {_shown(artifacts)}")
    text = "no slice verified " + "; ".join(parts) if parts else ""
    if unhashed:
        text += ("; " if text else "") + (
            f"no slice hashed {len(unhashed)} of {declared} artifact(s) (--hash-once: the "
            f"slices that load them checked only their size and header): {_shown(unhashed)}")
    return text


def _shown(paths: list[str]) -> str:
    return ", ".join(paths[:8]) + (f" and {len(paths) - 8} more" if len(paths) > 8 else "")


def _union_findings(slices: Sequence[Slice]) -> list[Finding]:
    """Every slice's findings, each once (manifest-wide ones appear in every slice)."""
    seen: set[tuple[object, ...]] = set()
    out: list[Finding] = []
    for s in slices:
        for f in s.report.findings:
            key = (f.code, f.severity, f.path, f.layer_index, f.message, f.check)
            if key not in seen:
                seen.add(key)
                out.append(f)
    return out


def _gate(findings: list[Finding], slices: Sequence[Slice]) -> Gate:
    errors = sorted({f.code for f in findings
                     if f.severity == "error" and f.code not in INCOMPLETE_CODES | {
                         "coverage_missing"}})
    if errors:
        return Gate(name="package_materialization", status="failed",
                    details=f"merged from {len(slices)} slice(s): {', '.join(errors)}")
    unsure = sorted({f.code for f in findings if f.code in INCOMPLETE_CODES | {
        "coverage_missing"}})
    if unsure or any(s.report.package_gate.status == "incomplete" for s in slices):
        return Gate(name="package_materialization", status="incomplete",
                    details=f"merged from {len(slices)} slice(s): could not check everything"
                    f"{': ' + ', '.join(unsure) if unsure else ''}")
    return Gate(name="package_materialization", status="passed",
                details=f"merged from {len(slices)} slice(s); every artifact verified")


def _runtime_gates(slices: Sequence[Slice]) -> list[RuntimeGate]:
    """Package-only slices give package-only gates; a gate some slice ran keeps its worst."""
    by_name: dict[str, list[RuntimeGate]] = defaultdict(list)
    for s in slices:
        for gate in s.report.runtime_gates:
            if gate.status != "not_required":
                by_name[gate.name].append(gate)
    if not by_name:
        return package_only_gates()
    out = []
    for gates in by_name.values():
        worst: GateStatus = combine_statuses([g.status for g in gates])
        out.append(next(g for g in gates if g.status == worst))
    return out


def _stage(stage: MaterializedStage, verified: set[str], findings: list[Finding]
           ) -> MaterializedStage:
    """A stage's verified count over the merged coverage: parts some slice verified cleanly."""
    bad = {f.path for f in findings if f.severity == "error" and f.path is not None}
    ok = sum(1 for p in stage.parts if p.path in verified and p.path not in bad)
    return stage.model_copy(update={"verified_artifacts": ok, "cached_artifacts": 0})


def _checks(slices: Sequence[Slice], own: list[Finding]) -> list[CheckRun]:
    merged: dict[str, CheckRun] = {}
    for s in slices:
        for run in s.report.checks:
            prev = merged.get(run.name)
            if prev is None:
                merged[run.name] = run
                continue
            status: CheckStatus = max(prev.status, run.status, key=lambda x: _CHECK_RANK[x])
            worst = run if _CHECK_RANK[run.status] > _CHECK_RANK[prev.status] else prev
            merged[run.name] = prev.model_copy(update={
                "status": status, "details": worst.details,  # a skip's reason only if skipped
                "findings": max(prev.findings, run.findings),
                "duration_ms": round(prev.duration_ms + run.duration_ms, 3),
                "codes": sorted(set(prev.codes) | set(run.codes))})
    codes = sorted({f.code for f in own})
    errors = any(f.severity == "error" and f.code != "coverage_missing" for f in own)
    merge_status: CheckStatus = ("failed" if errors else "error" if own else "passed")
    return [*merged.values(), CheckRun(name=MERGE_CHECK, status=merge_status,
                                       findings=len(own), duration_ms=0.0, codes=codes)]


def _weakest(modes: Iterable[VerificationMode | None]) -> VerificationMode | None:
    known = [m for m in modes if m is not None]
    if not known:
        return None
    return min(known, key=_VERIFICATION_STRENGTH.index)
