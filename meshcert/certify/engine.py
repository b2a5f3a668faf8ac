"""Run every registered check over a PackageView and assemble the CertReport (no I/O)."""

from __future__ import annotations

import hashlib
import os
import time

from meshcert.certify.checks import Check, all_checks
from meshcert.certify.coverage import build_coverage, model_mismatch
from meshcert.certify.manifest_model import is_int, layer_count
from meshcert.certify.mesh_llm_support import mesh_llm_support
from meshcert.certify.node_defaults import node_defaults
from meshcert.certify.recorded_source import source_model
from meshcert.certify.report import (
    ATTESTATION_POLICY,
    NOT_APPLICABLE,
    SCHEMA_VERSION,
    CertReport,
    CertScope,
    CheckRun,
    CheckStatus,
    Gate,
    GateStatus,
    MaterializedStage,
    RuntimeGate,
    StagePart,
    ToolInfo,
    TransferStats,
    combine_statuses,
)
from meshcert.certify.stages import StageRange, certification_ranges, plan_stages, stage_parts
from meshcert.certify.view import PackageView
from meshcert.core.clock import utc_now
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.git_blob import git_blob_id

# Codes that mean "could not tell", not "the package is bad": they make a result incomplete.
INCOMPLETE_CODES = frozenset({"internal_error", "hub_unreachable", "check_not_run",
                              "llama_cpp_crashed", "hf_job_failed"})
MESH_GATES = ("v1_models", "v1_chat_completions", "v1_responses")


def tool_info() -> ToolInfo:
    from meshcert.core.version import MESH_LLM_VERSION, __version__

    return ToolInfo(name="meshcert", version=__version__, mesh_llm_version=MESH_LLM_VERSION)


def run_checks(view: PackageView, checks: list[Check] | None = None
               ) -> tuple[list[Finding], list[CheckRun]]:
    """Run each check, containing crashes as `internal_error` findings naming the check. A
    check whose `runs_when` rules say it has nothing to do is `skipped`, with their reason; its
    time includes the work done for it elsewhere (`view.work_ms`: a worker's load)."""
    findings: list[Finding] = []
    runs: list[CheckRun] = []
    for check in checks if checks is not None else all_checks():
        if not check.applies_to(view.package_format):
            unused = check.unused_option(view)
            if unused is not None:  # said, never silently ignored
                runs.append(_unused_option_run(check, unused, view.package_format))
            continue
        started = time.perf_counter()
        details: str | None = None
        try:
            details = check.skip_reason(view)
            produced = [] if details is not None else [
                f.model_copy(update={"check": check.name}) for f in check.func(view)]
            status: CheckStatus = "skipped" if details is not None else _check_status(produced)
            if status == "passed" and _read_nothing(view):
                status, details = "skipped", NOTHING_READ
            elif status == "passed" and check.reads_headers and not _header_read(view):
                status, details = "skipped", NO_HEADER_READ
            elif status == "passed" and check.reads_artifact_files and not _file_read(view):
                status, details = "skipped", NO_FILE_READ
        except Exception as exc:  # containment: a crashing check never yields "passed"
            produced = [finding(
                "internal_error",
                f"check {check.name!r} crashed: {type(exc).__name__}: {exc}",
            ).model_copy(update={"check": check.name})]
            status = "error"
            details = f"{type(exc).__name__}: {exc}"
        elapsed = (time.perf_counter() - started) * 1000 + view.work_ms.get(check.name, 0.0)
        findings.extend(produced)
        runs.append(CheckRun(
            name=check.name, status=status, findings=len(produced),
            duration_ms=round(elapsed, 3), codes=sorted({f.code for f in produced}),
            details=details))
    return findings, runs


# A check passes only when it read something: on a run that read no package manifest (an empty
# directory, a lone GGUF, a missing manifest, an unreachable Hub ref) a check with nothing to say
# is skipped with this reason, never `passed` (the check that found the manifest missing fails).
NOTHING_READ = f"{NOT_APPLICABLE}: no package manifest was read, so there was nothing to check"


# A check that reads GGUF headers passes only when one was read: a package (or an inspected
# file) whose every GGUF is unreadable gave it nothing to check (gguf_structure says why)
NO_HEADER_READ = (f"{NOT_APPLICABLE}: no GGUF header could be read, so there was nothing to "
                  "check")


def _read_nothing(view: PackageView) -> bool:
    return view.manifest is None and not view.standalone


def _header_read(view: PackageView) -> bool:
    return any(isinstance(header, GGUFHeader) for header in view.headers.values())


NO_FILE_READ = (f"{NOT_APPLICABLE}: no declared artifact's file was looked at, so there was "
                "nothing to check")


def _file_read(view: PackageView) -> bool:
    return any(isinstance(entry.path, str) and entry.path in view.files
               for entry in view.artifacts())


def _unused_option_run(check: Check, flag: str, package_format: str | None) -> CheckRun:
    formats = "/".join(sorted(check.formats))
    return CheckRun(name=check.name, status="skipped", findings=0, duration_ms=0.0,
                    details=f"{NOT_APPLICABLE}: {flag} was given but applies to {formats} "
                    f"packages only; this package is {package_format or 'unknown'}: the "
                    "option was not used")


def _check_status(produced: list[Finding]) -> CheckStatus:
    if any(f.code in INCOMPLETE_CODES for f in produced):
        return "error"
    if any(f.severity == "error" for f in produced):
        return "failed"
    if any(f.severity == "warning" for f in produced):
        return "warning"
    return "passed"


def package_gate(findings: list[Finding], view: PackageView) -> Gate:
    errors = [f for f in findings if f.severity == "error" and f.code not in INCOMPLETE_CODES]
    unsure = [f for f in findings if f.code in INCOMPLETE_CODES]
    if errors:
        codes = sorted({f.code for f in errors})
        return Gate(name="package_materialization", status="failed",
                    details=f"{len(errors)} error finding(s): {', '.join(codes)}")
    if unsure or view.source_incomplete:
        reasons = sorted({f.code for f in unsure})
        if view.source_incomplete:
            reasons.append("source incomplete")
        return Gate(name="package_materialization", status="incomplete",
                    details=f"could not check everything: {', '.join(reasons)}")
    warnings = [f for f in findings if f.severity == "warning"]
    if warnings and view.options.strict:
        codes = sorted({f.code for f in warnings})
        return Gate(name="package_materialization", status="failed",
                    details=f"--strict: {len(warnings)} warning finding(s): {', '.join(codes)}")
    return Gate(name="package_materialization", status="passed",
                details=f"{len(warnings)} warning(s)" if warnings else None)


def _stage_entry(view: PackageView, stage: StageRange, total_layers: int) -> MaterializedStage:
    parts = stage_parts(view.artifacts(), view.package_format, stage, total_layers)
    verified = cached = size = 0
    out_parts: list[StagePart] = []
    for part in parts:
        declared = part.declared_size
        size += declared or 0
        out_parts.append(StagePart(role=part.role, path=str(part.path),
                                   artifact_bytes=declared, layer_index=part.layer_index))
        fact = view.files.get(part.path) if isinstance(part.path, str) else None
        expected = part.declared_sha256()
        if fact is None or expected is None:
            continue
        if fact.sha256 is not None and fact.sha256 == expected:
            verified += 1
            cached += int(fact.hash_cached)
        elif fact.sha256 is None and fact.lfs_sha256 == expected:
            verified += 1
    build = (view.stage_builds or {}).get(stage.stage_id)
    path: str | None = _materialized_path(view)
    if build is not None and build.path is not None and build.size is not None:
        path, size = build.path, build.size  # --materialize: the real stage file
    return MaterializedStage(
        stage_id=stage.stage_id, layer_start=stage.layer_start, layer_end=stage.layer_end,
        include_embeddings=stage.include_embeddings(),
        include_output=stage.include_output(total_layers),
        selected_part_count=len(parts), verified_artifacts=verified, cached_artifacts=cached,
        materialized_path=path, materialized_bytes=size, parts=out_parts)


def _materialized_path(view: PackageView) -> str | None:
    """mesh-llm reports the package directory for v1 and the carrier's local path for v2."""
    carrier = view.carrier_entry()
    if carrier is not None and view.local_dir and isinstance(carrier.path, str):
        return os.path.join(view.local_dir, *carrier.path.split("/"))
    return view.local_dir


def parity_gate(view: PackageView) -> RuntimeGate | None:
    """--parity: the `split_parity` gate (required), from the run left on the view."""
    result = view.parity
    if result is None:
        return None
    statuses: dict[str, GateStatus] = {"passed": "passed", "failed": "failed",
                                       "not_run": "incomplete", "crashed": "incomplete"}
    measurements: dict[str, float | int | str | None] = {
        "prompts": result.prompts, "tokens_per_prompt": result.tokens,
        "assembled_bytes": result.assembled_bytes, **result.timings_s}
    if result.divergence is not None:
        d = result.divergence
        measurements |= {"prompt_index": d.prompt_index, "position": d.position,
                         "max_logit_diff": d.max_logit_diff}
    return RuntimeGate(name="split_parity", status=statuses[result.status],
                       details=result.detail, measurements=measurements)


def package_only_gates() -> list[RuntimeGate]:
    return [RuntimeGate(name=name, status="not_required",
                        details="package-only certification requested") for name in MESH_GATES]


def _source_fields(view: PackageView) -> tuple[str | None, str | None, int | None]:
    """source_model_path/sha256/bytes as mesh-llm fills them: v1 from source_model.path and
    files[].size_bytes (null when any size is unknown); v2 the carrier's local path and the
    sum of files[].byte_size."""
    manifest = view.manifest or {}
    source = manifest.get("source_model")
    if not isinstance(source, dict):
        return None, None, None
    v2 = view.package_format == "v2"
    path = source.get("path") if isinstance(source.get("path"), str) else None
    if v2:
        carrier = view.carrier_entry()
        path = _materialized_path(view) if carrier is not None and view.local_dir else (
            carrier.path if carrier is not None and isinstance(carrier.path, str) else None)
    sha = source.get("sha256") if isinstance(source.get("sha256"), str) else None
    files = source.get("files")
    total: int | None = None
    if isinstance(files, list) and files:
        sizes = [f.get("byte_size" if v2 else "size_bytes") for f in files if isinstance(f, dict)]
        if sizes and all(is_int(s) for s in sizes):
            total = sum(sizes)  # type: ignore[arg-type]
    return path, sha, total


def build_report(
    view: PackageView,
    *,
    input_text: str,
    started_at: str,
    runtime_gates: list[RuntimeGate] | None = None,
    checks: list[Check] | None = None,
    extra_findings: list[Finding] | None = None,
) -> CertReport:
    """Certify the view: run the checks, compute stages and statuses, return the report."""
    check_findings, runs = run_checks(view, checks)
    policy = [f if f.check else f.model_copy(update={"check": ATTESTATION_POLICY})
              for f in extra_findings or []]  # the trust policy's verdict, by name
    gates = list(runtime_gates if runtime_gates is not None else package_only_gates())
    parity = parity_gate(view)
    if parity is not None:
        gates.append(parity)
    coverage = build_coverage(view, gates)
    manifest_model = (view.manifest or {}).get("model_id")
    findings = list(view.source_findings) + check_findings + policy + model_mismatch(
        coverage.runtime, manifest_model if isinstance(manifest_model, str) else None)
    gate = package_gate(findings, view)
    required = [g.status for g in gates if g.severity == "required"]
    status = combine_statuses([gate.status, *required])
    manifest = view.manifest or {}
    total_layers = layer_count(manifest) if view.manifest is not None else None
    stages: list[MaterializedStage] = []
    plan: list[MaterializedStage] = []
    if total_layers:
        stages = [_stage_entry(view, s, total_layers) for s in certification_ranges(total_layers)]
        if view.options.stages:
            plan = [_stage_entry(view, s, total_layers)
                    for s in plan_stages(total_layers, view.options.stages)]
    src_path, src_sha, src_bytes = _source_fields(view)
    model_id = manifest.get("model_id")
    resolved = view.display_ref
    if view.ref.kind == "hf" and view.ref.resolved_commit:
        resolved = f"hf://{view.ref.repo}@{view.ref.resolved_commit}"
    elif view.local_dir:
        resolved = view.local_dir
    transfer = TransferStats(**view.transfer) if view.transfer else None
    return CertReport(
        schema_version=SCHEMA_VERSION, status=status, input=input_text,
        resolved_package_ref=resolved, local_package_dir=view.local_dir,
        model_id=model_id if isinstance(model_id, str) else None,
        manifest_sha256=hashlib.sha256(view.manifest_raw).hexdigest()
        if view.manifest_raw is not None else None,
        source_model_path=src_path, source_model_sha256=src_sha, source_model_bytes=src_bytes,
        layer_count=total_layers, package_gate=gate, materialized_stages=stages,
        runtime_gates=gates, findings=findings, checks=runs, ref=view.ref, tool=tool_info(),
        started_at=started_at, finished_at=utc_now(), verification=view.verification,
        stage_plan=plan, transfer=transfer, runtime_abi=view.options.runtime_abi,
        package_format=view.package_format, package_id=_package_id(view),
        scope=_scope(view), digests=_digests(view), hub_digests=_hub_digests(view),
        cache_hits=sum(1 for fact in view.files.values()
                       if fact.sha256 is not None and fact.hash_cached),
        git_blobs=_git_blobs(view),
        node_defaults=node_defaults(view.manifest), mesh_llm=mesh_llm_support(view),
        source_model=source_model(view), coverage=coverage,
        declared_artifacts=list(dict.fromkeys(
            e.path for e in view.artifacts() if isinstance(e.path, str))),
    )


def _scope(view: PackageView) -> CertScope | None:
    selection = view.selection()
    request, stage = selection.request, selection.stage
    if request is None or stage is None or selection.paths is None:
        return None  # whole package, or a scope the scope check reports as invalid
    label = (f"{request.stage_index}/{request.stage_count}"
             if request.stage_index is not None else None)
    hashed = sorted(selection.hashed) if selection.hashed is not None else None
    return CertScope(layer_start=stage.layer_start, layer_end=stage.layer_end, stage=label,
                     artifacts=sorted(selection.paths), hashed_artifacts=hashed)


def _digests(view: PackageView) -> dict[str, str]:
    """The SHA-256 this run computed (not the Hub's attested ones), for `report merge`."""
    return {path: fact.sha256 for path, fact in sorted(view.files.items())
            if fact.sha256 is not None}


def _hub_digests(view: PackageView) -> dict[str, str]:
    """The Hub's LFS SHA-256 of each artifact the run did not hash (what the Hub-attested
    checks compared the manifest with), for signing the result (meshcert.attest)."""
    return {path: fact.lfs_sha256 for path, fact in sorted(view.files.items())
            if fact.sha256 is None and fact.lfs_sha256 is not None}


def _git_blobs(view: PackageView) -> dict[str, str]:
    """The git blob id of each artifact read whole (publisher files) whose bytes hash to the
    digest the run verified for it, for the attestation's `gitBlob` subject digests."""
    out: dict[str, str] = {}
    for path, small in view.publisher_files.items():
        fact = view.files.get(path)
        verified = (fact.sha256 or fact.lfs_sha256) if fact is not None else None
        if small.data is not None and verified is not None \
                and hashlib.sha256(small.data).hexdigest() == verified.lower():
            out[path] = git_blob_id(small.data)
    return dict(sorted(out.items()))


def _package_id(view: PackageView) -> str | None:
    value = (view.manifest or {}).get("package_id") if view.package_format == "v2" else None
    return value if isinstance(value, str) else None
