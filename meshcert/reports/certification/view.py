"""CertReport -> a view-model the templates only lay out (grouping, labels, charts decided here).

Nothing here re-runs a check: everything shown comes from the report as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from markupsafe import Markup

from meshcert.certify.report import (
    CertReport,
    CheckRun,
    MaterializedStage,
    RuntimeGate,
    SourceModel,
)
from meshcert.certify.stages import layer_range
from meshcert.certify.verdict import Verdict, verdict
from meshcert.core.findings import Finding
from meshcert.reports import fmt, svg
from meshcert.reports.certification.coverage import CoverageView, build_coverage_view
from meshcert.reports.certification.node_defaults import NodeView, build_node_view
from meshcert.reports.common import Fact, Stat

SEVERITY_ORDER = ("error", "warning", "info")
SEVERITY_TITLES = {"error": "Errors", "warning": "Warnings", "info": "Notes"}
NO_CHECK = "source / input"  # findings raised while loading the package, outside check groups
HEADLINES = {
    "passed": "Certification passed",
    "failed": "Certification failed",
    "incomplete": "Certification incomplete",
}
VERIFICATION_NOTES = {
    "local-sha256": "every artifact hashed locally (sha256)",
    "hub-attested": "sha256 attested by the Hub (LFS), not re-hashed",
    "sha256-streamed": "artifacts streamed from the Hub and hashed",
    "size-only": "sizes only; no content hashes verified",
}
ROLE_COLOURS = {
    "shared.metadata": "#6e7781",
    "shared.embeddings": "#8250df",
    "shared.output": "#bc4c00",
    "projector": "#1b7c83",
}
LAYER_COLOURS = ("#0969da", "#54aeff")
OTHER_COLOUR = "#bf8700"


@dataclass(frozen=True)
class Banner:
    status: str
    headline: str
    subject: str  # model id, or the input when the manifest had none
    ref_kind: str
    ref_text: str
    pinned: bool
    pin_text: str
    gate_details: str
    stats: list[Stat]
    verdict: str  # the sentence every format states (meshcert.certify.verdict)
    coverage: str = ""  # what the run did not verify, in words ("" when it verified all)


@dataclass(frozen=True)
class FindingRow:
    code: str
    severity: str
    message: str
    where: str
    layer: str
    remediation: str


@dataclass(frozen=True)
class CheckGroup:
    name: str
    status: str
    findings: list[FindingRow]


@dataclass(frozen=True)
class SeverityGroup:
    severity: str
    title: str
    count: int
    checks: list[CheckGroup]


@dataclass(frozen=True)
class CheckRow:
    name: str
    status: str
    findings: int
    codes: str
    duration: str
    details: str


@dataclass(frozen=True)
class StageRow:
    stage_id: str
    layers: str
    embeddings: bool
    output: bool
    parts: int
    verified: str
    size: str
    size_exact: str
    shared_parts: list[str]
    path: str


@dataclass(frozen=True)
class StageFigure:
    key: str
    title: str
    caption: str
    chart: Markup
    rows: list[StageRow]


@dataclass(frozen=True)
class GateRow:
    name: str
    status: str
    severity: str
    http_status: str
    latency: str
    ttft: str
    tokens_per_s: str
    completion_tokens: str
    details: str
    extra: list[tuple[str, str]]


@dataclass
class CertView:
    title: str
    banner: Banner
    severity_groups: list[SeverityGroup]
    checks: list[CheckRow]
    stage_figures: list[StageFigure]
    gates: list[GateRow]
    gate_chart: Markup | None
    provenance: list[Fact]
    counts: dict[str, int] = field(default_factory=dict)  # the verdict's: error/warning/info
    checks_run: int = 0
    checks_skipped: int = 0
    coverage: CoverageView | None = None  # merged reports: which slice verified which layers
    node: NodeView | None = None  # v2: what a node applies, which mesh-llm loads it
    attestation: list[Fact] | None = None  # --attest-key: what was signed, by whom
    coverage_facts: list[Fact] = field(default_factory=list)  # what this run verified


# ---------------------------------------------------------------------------------------------
def _ref_lines(report: CertReport) -> tuple[str, str, bool, str]:
    """(kind, ref text, pinned, pin explanation)."""
    ref = report.ref
    if ref is None:
        return "unknown", report.resolved_package_ref or report.input, False, "ref not recorded"
    if ref.kind == "hf":
        text = f"hf://{ref.repo or '?'}"
        if ref.resolved_commit:
            text += f"@{ref.resolved_commit}"
        if ref.pinned:
            return "hf", text, True, "pinned to an immutable commit"
        requested = ref.requested_revision or "(no revision)"
        resolved = f", resolved to {ref.resolved_commit}" if ref.resolved_commit else ""
        return "hf", text, False, f"NOT pinned: requested {requested}{resolved}"
    where = report.local_package_dir or report.resolved_package_ref or report.input
    return "local", where, False, "local directory: no Hub commit to pin"


def _banner(report: CertReport, said: Verdict) -> Banner:
    kind, ref_text, pinned, pin_text = _ref_lines(report)
    required = [g for g in report.runtime_gates if g.status != "not_required"]
    runtime = (f"{sum(g.status == 'passed' for g in required)}/{len(required)} passed"
               if required else "not required")
    stats = [
        Stat("errors", str(said.errors), "bad" if said.errors else ""),
        Stat("warnings", str(said.warnings), "warn" if said.warnings else ""),
        Stat("notes", str(said.notes)),
        Stat("checks", f"{said.checks_run} run, {said.checks_skipped} skipped"),
        Stat("package gate", report.package_gate.status, report.package_gate.status),
        Stat("runtime gates", runtime),
        Stat("layers", _layers(report)),
    ]
    return Banner(status=report.status, headline=said.headline(),
                  subject=report.model_id or report.input, ref_kind=kind, ref_text=ref_text,
                  pinned=pinned, pin_text=pin_text,
                  gate_details=report.package_gate.details or "", stats=stats,
                  verdict=said.sentence(), coverage="; ".join(said.coverage))


def _layers(report: CertReport) -> str:
    """The package's layer count, or for a slice the layers it covered of them."""
    total = "\u2014" if report.layer_count is None else str(report.layer_count)
    scope = report.coverage.scope if report.coverage is not None else None
    if scope is not None and scope.kind == "slice" and scope.layer_start is not None \
            and scope.layer_end is not None:
        return f"slice {layer_range(scope.layer_start, scope.layer_end)} of {total}"
    return total


def _coverage_facts(report: CertReport) -> list[Fact]:
    cov = report.coverage
    if cov is None:
        return [Fact("coverage", "not recorded", note="a report written before meshcert "
                     "stated its coverage")]
    d, scope, runtime = cov.digests, cov.scope, cov.runtime
    digests = (f"{d.mode.replace('_', ' ')}: {d.hashed} hashed here, {d.cached} from a verify "
               f"cache, {d.written} hashed while writing, {d.hub_attested} Hub-attested, "
               f"{d.sizes_only} sizes only, of {d.artifacts} artifact(s) read")
    where = "package" if scope.kind == "package" else (
        f"slice layers {layer_range(scope.layer_start or 0, scope.layer_end or 0)}")
    served = ("not asked" if runtime.status == "not_asked" else
              f"ran; answered by {runtime.served_model or 'an unnamed model'}"
              + (f" (asked for {runtime.requested_model})" if runtime.requested_model else ""))
    return [Fact("digests", digests),
            Fact("scope", f"{where}: {scope.artifacts_checked}/{scope.artifacts_total} "
                 "artifacts checked"),
            Fact("runtime", served),
            Fact("parity", cov.parity.replace("_", " ")),
            Fact("llama.cpp parser", cov.llama_cpp.replace("_", " "))]


def _finding_row(f: Finding) -> FindingRow:
    return FindingRow(code=f.code, severity=f.severity, message=f.message,
                      where=f.path or "", layer="" if f.layer_index is None else str(f.layer_index),
                      remediation=f.remediation)


def severity_groups(findings: Sequence[Finding], checks: Sequence[CheckRun]
                    ) -> list[SeverityGroup]:
    """Findings grouped by severity (errors first), then by check in the order checks ran."""
    order = {c.name: i for i, c in enumerate(checks)}
    status = {c.name: c.status for c in checks}
    groups: list[SeverityGroup] = []
    for severity in SEVERITY_ORDER:
        mine = [f for f in findings if f.severity == severity]
        if not mine:
            continue
        names = sorted({f.check or NO_CHECK for f in mine},
                       key=lambda n: (n != NO_CHECK, order.get(n, len(order)), n))
        groups.append(SeverityGroup(
            severity=severity, title=SEVERITY_TITLES[severity], count=len(mine),
            checks=[CheckGroup(name=name, status=status.get(name) or _group_status(
                                   name, [f for f in findings if f.check == name]),
                               findings=[_finding_row(f) for f in mine
                                         if (f.check or NO_CHECK) == name])
                    for name in names]))
    return groups


def _group_status(name: str, mine: Sequence[Finding]) -> str:
    """Findings of no check that ran: raised while loading (`source`), or the trust policy's
    (its status from their severities, as the verdict states it)."""
    if name == NO_CHECK:
        return "source"
    if any(f.severity == "error" for f in mine):
        return "failed"
    return "warning" if any(f.severity == "warning" for f in mine) else "passed"


def _check_rows(checks: Sequence[CheckRun]) -> list[CheckRow]:
    return [CheckRow(name=c.name, status=c.status, findings=c.findings,
                     codes=", ".join(c.codes),
                     duration="\u2014" if c.status == "skipped" else  # it did no work
                     fmt.number(c.duration_ms, 2 if c.duration_ms < 1 else 1, "ms"),
                     details=c.details or "") for c in checks]


def _part_colour(role: str, layer_index: int | None) -> str:
    if role == "layer":
        return LAYER_COLOURS[(layer_index or 0) % 2]
    return ROLE_COLOURS.get(role, OTHER_COLOUR)


def _stage_rows(stages: Sequence[MaterializedStage]) -> list[StageRow]:
    return [StageRow(
        stage_id=s.stage_id, layers=layer_range(s.layer_start, s.layer_end)
        if s.layer_end > s.layer_start else "none",
        embeddings=s.include_embeddings, output=s.include_output,
        parts=s.selected_part_count,
        verified=f"{s.verified_artifacts}/{s.selected_part_count}"
        + (f" ({s.cached_artifacts} cached)" if s.cached_artifacts else ""),
        size=fmt.human_bytes(s.materialized_bytes),
        size_exact=fmt.exact_bytes(s.materialized_bytes),
        shared_parts=[p.role.removeprefix("shared.") for p in s.parts if p.role != "layer"],
        path=s.materialized_path or "") for s in stages]


def stage_chart(stages: Sequence[MaterializedStage], title: str) -> Markup:
    """One stacked bar per stage: each part it fetches, sized by bytes, coloured by role."""
    rows: list[svg.StackRow] = []
    roles_seen: dict[str, str] = {}
    for stage in stages:
        segments: list[svg.Segment] = []
        for part in stage.parts:
            colour = _part_colour(part.role, part.layer_index)
            label = (f"layer {part.layer_index}" if part.role == "layer"
                     and part.layer_index is not None else part.role)
            segments.append(svg.Segment(label, float(part.artifact_bytes or 0), colour,
                                        f"{part.path}, {fmt.human_bytes(part.artifact_bytes)}",
                                        key=part.path))
            roles_seen.setdefault("layers" if part.role == "layer" else part.role,
                                  LAYER_COLOURS[0] if part.role == "layer" else colour)
        if not segments:
            segments.append(svg.Segment("parts not listed", float(stage.materialized_bytes),
                                        svg.TONES["muted"]))
            roles_seen.setdefault("parts not listed", svg.TONES["muted"])
        span = (f"layers {layer_range(stage.layer_start, stage.layer_end)}"
                if stage.layer_end > stage.layer_start else "no layers")
        rows.append(svg.StackRow(f"{stage.stage_id}", segments,
                                 f"{fmt.human_bytes(stage.materialized_bytes)} \u00b7 {span}",
                                 key=stage.stage_id, css="stack-row stage-bar"))
    legend = [svg.LegendItem(role, colour) for role, colour in roles_seen.items()]
    return svg.stacked_rows(rows, title=title, legend=legend)


def _stage_figures(report: CertReport) -> list[StageFigure]:
    figures = []
    if report.materialized_stages:
        figures.append(StageFigure(
            key="materialized", title="Certification stages",
            caption="The two-stage split mesh-llm materializes to certify the package: bytes "
                    "per stage and the parts each stage fetches.",
            chart=stage_chart(report.materialized_stages, "Bytes per certification stage"),
            rows=_stage_rows(report.materialized_stages)))
    if report.stage_plan:
        figures.append(StageFigure(
            key="plan", title=f"Stage plan ({len(report.stage_plan)} stages)",
            caption="The package tool's plan: what each peer would download.",
            chart=stage_chart(report.stage_plan, "Bytes per planned stage"),
            rows=_stage_rows(report.stage_plan)))
    return figures


def _gate_rows(gates: Sequence[RuntimeGate]) -> list[GateRow]:
    return [GateRow(
        name=g.name, status=g.status, severity=g.severity,
        http_status="\u2014" if g.http_status is None else str(g.http_status),
        latency=fmt.number(g.latency_ms, 1, "ms"), ttft=fmt.number(g.ttft_ms, 1, "ms"),
        tokens_per_s=fmt.number(g.tokens_per_s, 1),
        completion_tokens=fmt.number(g.completion_tokens),
        details=g.details or "",
        extra=[(k, "\u2014" if v is None else (f"{v:,.2f}" if isinstance(v, float) else str(v)))
               for k, v in sorted(g.measurements.items())]) for g in gates]


_GATE_TONES = {"passed": "ok", "failed": "bad", "incomplete": "warn", "not_required": "muted"}


def _gate_chart(gates: Sequence[RuntimeGate]) -> Markup | None:
    timed = [g for g in gates if g.latency_ms is not None]
    if not timed:
        return None
    return svg.hbar_chart([svg.Bar(g.name, float(g.latency_ms or 0.0),
                                   fmt.number(g.latency_ms, 1, "ms"),
                                   _GATE_TONES.get(g.status, "neutral"), key=g.name)
                           for g in timed], title="Latency per runtime gate", unit="ms")


def _mono(label: str, value: str | None) -> Fact:
    """A monospace fact, or a plain em dash when the report has no value."""
    return Fact(label, value, mono=True) if value else Fact(label, "\u2014")


def _provenance(report: CertReport) -> list[Fact]:
    ref = report.ref
    facts = [
        Fact("tool", f"{report.tool.name} {report.tool.version}"),
        Fact("mesh-llm rules", f"v{report.tool.mesh_llm_version}" if report.tool.mesh_llm_version
             else "\u2014", note="the mesh-llm release whose package rules meshcert applies"),
        _mono("input", report.input),
        _mono("resolved package ref", report.resolved_package_ref),
    ]
    if ref is not None:
        facts += [
            Fact("ref kind", ref.kind),
            _mono("requested revision", ref.requested_revision),
            _mono("resolved commit", ref.resolved_commit),
            Fact("pinned", "yes" if ref.pinned else "no"),
        ]
    facts += [
        _mono("model id", report.model_id),
        Fact("package format", report.package_format or "\u2014"),
        _mono("package id", report.package_id),
        _mono("manifest sha256", report.manifest_sha256),
        *_source_facts(report),
        _mono("source model sha256", report.source_model_sha256),
        Fact("source model size", fmt.human_bytes(report.source_model_bytes),
             note=fmt.exact_bytes(report.source_model_bytes)
             if report.source_model_bytes is not None else ""),
        Fact("verification", report.verification or "\u2014",
             note=VERIFICATION_NOTES.get(report.verification or "", "")),
        Fact("runtime ABI", report.runtime_abi or "\u2014"),
        _mono("started", report.started_at),
        _mono("finished", report.finished_at),
        Fact("duration", fmt.elapsed(report.started_at, report.finished_at)),
    ]
    if report.transfer is not None:
        t = report.transfer
        facts += [
            Fact("HTTP requests", f"{t.requests:,}"),
            Fact("bytes transferred", fmt.human_bytes(t.bytes_transferred),
                 note=fmt.exact_bytes(t.bytes_transferred)),
            Fact("header bytes read", fmt.human_bytes(t.header_bytes),
                 note=fmt.exact_bytes(t.header_bytes)),
        ]
    else:
        facts.append(Fact("transfer", "none (local package)"))
    return facts


def _source_facts(report: CertReport) -> list[Fact]:
    """The real source the manifest records (repo@revision, file), or "none"; never the
    package's carrier, which is what mesh-llm's source_model_path names for a v2 package."""
    source = report.source_model
    if source is None or not (source.repo or source.file):
        return [Fact("source model", "none", note="the manifest records no source model")]
    if source.repo is None:
        where = "no Hub repo recorded"
    else:
        where = source.repo + (f"@{source.revision}" if source.revision
                               else " (revision not recorded)")
    return [_mono("source model", where), _mono("source file", source.file),
            _identity_fact(source)]


IDENTITY_WORDS = {
    "verified": "verified against the Hub",
    "mismatch": "does not match the Hub: do not trust it",
    "unverified": "claimed, not verified",
}


def _identity_fact(source: SourceModel) -> Fact:
    """Whether anyone checked the recorded source: the Hub's answer, or "claimed, not
    verified" (no check was possible, or none was asked for)."""
    if source.identity is None:
        return Fact("source identity", "claimed, not verified",
                    note="the Hub was not asked (`models certify` and `catalog certify` ask it)"
                    if source.repo else "no Hub repo recorded")
    return Fact("source identity", IDENTITY_WORDS[source.identity],
                note=source.identity_detail or "")


def _attestation(report: CertReport) -> list[Fact] | None:
    signed = report.attestation
    if signed is None:
        return None
    return [Fact("result", signed.result), _mono("signer", signed.signer),
            Fact("subjects", f"{signed.subjects:,}", note="the manifest and every artifact, "
                 "by the SHA-256 certification verified"),
            _mono("attestation file", signed.file)]


def build_cert_view(report: CertReport) -> CertView:
    said = verdict(report)
    counts = {"error": said.errors, "warning": said.warnings, "info": said.notes}
    return CertView(
        title=f"{said.headline()}: {report.model_id or report.input}",
        banner=_banner(report, said),
        severity_groups=severity_groups(report.findings, report.checks),
        checks=_check_rows(report.checks),
        stage_figures=_stage_figures(report),
        gates=_gate_rows(report.runtime_gates),
        gate_chart=_gate_chart(report.runtime_gates),
        provenance=_provenance(report),
        counts=counts,
        checks_run=said.checks_run,
        checks_skipped=said.checks_skipped,
        coverage=build_coverage_view(report),
        node=build_node_view(report),
        attestation=_attestation(report),
        coverage_facts=_coverage_facts(report),
    )
