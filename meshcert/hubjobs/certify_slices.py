"""`models certify hf://ns/pkg@sha --package-only --hf-job --stages N`: N jobs, each mounting
the package repo read-only at the commit and hashing its slice next to the storage, merged
into one report.

1. Pre-flight, before any money is spent: the package is certified header-only (Hub-attested
   hashes, a few requests) with the N-stage plan; a package that fails there fails here, and
   nothing is submitted. The plan says per slice which layers and bytes, the flavor (the
   cheapest CPU flavor of `list_jobs_hardware()` that fits, or the one asked for), the timeout
   (bytes at `costs.CERTIFY_BYTES_PER_S` plus start-up) and the maximum cost of all N jobs.
   Each byte is hashed once (`--hash-once`): an artifact several stages load (shared/common)
   is hashed by one slice (`meshcert.certify.stages.hashing_shares`) and only checked (size,
   header) by the others, so a slice's bytes are its share, and they add up to the package's.
2. With `confirm`, the N jobs run; the launcher waits for each to end, reads its slice report
   back from its logs (`report_channel`) and merges them (`meshcert.certify.merge`). A job that ends
   without a readable report is `hf_job_failed` naming the slice and job: the merged result is
   incomplete, never passed. Ctrl-C cancels the jobs already submitted.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.merge import Slice, merge_slices
from meshcert.certify.report import CertReport, Gate, HfJob, combine_statuses
from meshcert.certify.stages import hashing_shares, layer_range
from meshcert.core.errors import Refused
from meshcert.core.findings import Finding, finding
from meshcert.core.hub.errors import HubError
from meshcert.core.version import __version__
from meshcert.hubjobs.commands import IMAGE, PACKAGE_MOUNT, certify_slice_command, slice_tag
from meshcert.hubjobs.costs import CERTIFY_BYTES_PER_S, FIXED_S, timeout_for
from meshcert.hubjobs.hardware import Flavor, Needs, NoFlavor, pick_flavor
from meshcert.hubjobs.jobs_api import Jobs, JobSpec, JobState, Mount
from meshcert.hubjobs.report_channel import ChannelError, decode

SCRATCH_BYTES = 1 << 30
RAM_BYTES = 2 * 10**9
CPUS = 2


@dataclass(frozen=True)
class SlicePlan:
    index: int
    count: int
    layer_start: int
    layer_end: int
    artifacts: list[str]  # what the stage's node loads: the slice checks each of them
    n_bytes: int  # the bytes of its share: what it hashes
    timeout_s: int
    hashed: list[str] = field(default_factory=list)  # its share of the plan
    loaded_bytes: int = 0  # the bytes of `artifacts`

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass
class CertifyJobsPlan:
    repo: str
    commit: str
    manifest_sha256: str | None
    slices: list[SlicePlan]
    flavor: Flavor
    needs: Needs
    install: str
    max_cost_usd: float
    job_ids: list[str] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "package": f"hf://{self.repo}@{self.commit}", "source_commit": self.commit,
            "stages": len(self.slices), "flavor": self.flavor.name,
            "unit_cost_usd": self.flavor.unit_cost_usd,
            "unit_seconds": self.flavor.unit_seconds,
            "disk_bytes_needed": self.needs.disk_bytes,
            "timeout_seconds": max(s.timeout_s for s in self.slices),
            "hashed_bytes": sum(s.n_bytes for s in self.slices),
            "loaded_bytes": sum(s.loaded_bytes for s in self.slices),
            "max_cost_usd": self.max_cost_usd,
            "rate_bytes_per_s": CERTIFY_BYTES_PER_S, "fixed_seconds": FIXED_S,
            "install": self.install,
            "slices": [{"slice": s.label, "layer_start": s.layer_start,
                        "layer_end": s.layer_end, "bytes": s.n_bytes,
                        "loaded_bytes": s.loaded_bytes, "artifacts": len(s.artifacts),
                        "hashed_artifacts": len(s.hashed), "timeout_seconds": s.timeout_s}
                       for s in self.slices],
            "job_ids": list(self.job_ids),
        }


def preflight_report(model: str, stages: int | None, *, runtime_abi: str | None = None,
                     allow_unpinned: bool = False, strict: bool = False) -> CertReport:
    """The pre-flight: the whole package certified header-only with the N-stage plan, before
    anything is spent. --strict applies: it reads every header of the whole package, so every
    package-level warning is found before a job runs."""
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.view import CertOptions

    options = CertOptions(runtime_abi=runtime_abi, allow_unpinned=allow_unpinned,
                          stages=stages, strict=strict)
    return certify_package(CertRequest(model=model, options=options))


def plan_certify_jobs(preflight: CertReport, flavors: list[Flavor], *, flavor_name: str,
                      install: str) -> CertifyJobsPlan:
    """The N slice jobs of a pre-flight report certified with `--stages N`."""
    ref = preflight.ref
    repo = ref.repo if ref is not None else None
    commit = ref.resolved_commit if ref is not None else None
    if ref is None or ref.kind != "hf" or not repo or not commit:
        raise Refused("--hf-job certifies a published package: give hf://ns/repo@<sha>")
    if not preflight.stage_plan:
        raise Refused("the package has no stage plan (its manifest has no usable "
                          "layer_count)")
    count = len(preflight.stage_plan)
    shares = hashing_shares([[(p.path, p.artifact_bytes) for p in stage.parts]
                             for stage in preflight.stage_plan])
    slices = []
    for i, stage in enumerate(preflight.stage_plan):
        sizes = {p.path: p.artifact_bytes or 0 for p in stage.parts}
        n_bytes = sum(sizes[path] for path in shares[i])
        slices.append(SlicePlan(i, count, stage.layer_start, stage.layer_end,
                                [p.path for p in stage.parts], n_bytes,
                                timeout_for(n_bytes, CERTIFY_BYTES_PER_S), hashed=shares[i],
                                loaded_bytes=sum(sizes.values())))
    # the mount fetches lazily and may keep what it read (headers of the parts it only checks):
    # plan disk for the largest stage's loaded bytes
    needs = Needs(disk_bytes=max(s.loaded_bytes for s in slices) + SCRATCH_BYTES,
                  ram_bytes=RAM_BYTES, cpus=CPUS)
    try:
        flavor = pick_flavor(flavors, flavor_name, needs, "a slice")
    except NoFlavor as exc:
        raise Refused(f"{exc}" + (": use more --stages" if flavor_name == "auto" else "")
                          ) from None
    cost = round(sum(flavor.cost_usd(s.timeout_s) for s in slices), 6)
    return CertifyJobsPlan(repo, commit, preflight.manifest_sha256, slices, flavor, needs,
                           install, cost)


def job_spec(plan: CertifyJobsPlan, item: SlicePlan, token: str | None) -> JobSpec:
    from meshcert.hubjobs.commands import JOB_ENV

    return JobSpec(
        image=IMAGE,
        command=certify_slice_command(plan.repo, plan.commit, item.index, item.count,
                                      install=plan.install),
        flavor=plan.flavor.name, timeout_s=item.timeout_s,
        labels={"meshcert": __version__, "meshcert-task": "certify-slice",
                "package": plan.repo.replace("/", "--"), "commit": plan.commit[:12],
                "slice": f"{item.index}-of-{item.count}"},
        mounts=[Mount(repo=plan.repo, revision=plan.commit, path=PACKAGE_MOUNT)],
        env=dict(JOB_ENV), secrets={"HF_TOKEN": token} if token else {})


@dataclass
class Launch:
    """How the launcher talks back: job state changes and (with follow) log lines."""

    on_state: Callable[[SlicePlan, JobState], None] = lambda _s, _j: None
    on_log: Callable[[SlicePlan, str], None] | None = None  # set: stream every job's logs
    poll_s: float = 10.0


def run_certify_jobs(plan: CertifyJobsPlan, preflight: CertReport, jobs: Jobs, *,
                     token: str | None, launch: Launch | None = None) -> CertReport:
    """Submit the slice jobs, wait for them, and merge what they report."""
    launch = launch or Launch()
    submitted: list[tuple[SlicePlan, JobState]] = []
    try:
        for item in plan.slices:
            state = jobs.run(job_spec(plan, item, token))
            plan.job_ids.append(state.job_id)
            submitted.append((item, state))
            launch.on_state(item, state)
        followers = _follow_logs(jobs, submitted, launch)
        finals = _wait(jobs, submitted, launch)
        for thread in followers:
            thread.join(timeout=30)
    except BaseException as exc:
        for _item, state in submitted:  # never leave jobs running (and billing) behind
            with contextlib.suppress(HubError):
                jobs.cancel(state.job_id)
        if isinstance(exc, HubError) and submitted:  # the Hub's failure, and what became of
            # the jobs (none submitted: the Hub's failure alone, nothing was cancelled)
            raise HubError(exc.code, f"{exc.message} (submitted jobs were cancelled)",
                           retryable=exc.retryable, retry_after=exc.retry_after,
                           status=exc.status) from exc
        raise
    return _merge(plan, preflight, jobs, finals)


def _follow_logs(jobs: Jobs, submitted: list[tuple[SlicePlan, JobState]], launch: Launch
                 ) -> list[threading.Thread]:
    if launch.on_log is None:
        return []
    on_log = launch.on_log

    def follow(item: SlicePlan, job_id: str) -> None:
        try:
            for line in jobs.logs(job_id, follow=True):
                on_log(item, line)
        except HubError as err:
            on_log(item, f"(logs stopped: {err.message})")

    threads = [threading.Thread(target=follow, args=(item, state.job_id), daemon=True,
                                name=f"job-logs-{item.index}") for item, state in submitted]
    for thread in threads:
        thread.start()
    return threads


def _wait(jobs: Jobs, submitted: list[tuple[SlicePlan, JobState]], launch: Launch
          ) -> list[tuple[SlicePlan, JobState]]:
    states = {item.index: state for item, state in submitted}
    while True:
        pending = [item for item, _ in submitted if not states[item.index].finished]
        if not pending:
            return [(item, states[item.index]) for item, _ in submitted]
        threading.Event().wait(launch.poll_s)  # not time.sleep: tests record those
        for item in pending:
            state = jobs.inspect(states[item.index].job_id)
            if state.stage != states[item.index].stage:
                launch.on_state(item, state)
            states[item.index] = state


def _merge(plan: CertifyJobsPlan, preflight: CertReport, jobs: Jobs,
           finals: list[tuple[SlicePlan, JobState]]) -> CertReport:
    slices: list[Slice] = []
    extra: list[Finding] = []
    records: list[HfJob] = []
    for item, state in finals:
        report, why = _slice_report(jobs, item, state)
        if report is not None and report.manifest_sha256 != plan.manifest_sha256:
            extra.append(finding("slice_package_mismatch", f"slice {item.label} (job "
                                 f"{state.job_id}) certified a manifest with sha256 "
                                 f"{report.manifest_sha256}, not the published "
                                 f"{plan.manifest_sha256}"))
            report, why = None, "it certified another manifest"
        if report is not None:
            slices.append(Slice(name=f"slice {item.label} (job {state.job_id})",
                                report=report))
        else:
            extra.append(finding("hf_job_failed", f"slice {item.label} (layers "
                                 f"{layer_range(item.layer_start, item.layer_end)}, job "
                                 f"{state.job_id}) "
                                 f"ended {state.stage}"
                                 + (f" ({state.message})" if state.message else "")
                                 + f": {why}; its {len(item.artifacts)} artifact(s) are not "
                                 "verified"))
        records.append(HfJob(slice=item.label, job_id=state.job_id, flavor=plan.flavor.name,
                             stage=state.stage, message=state.message,
                             report=report is not None))
    base = merge_slices(slices) if slices else preflight.model_copy(update={
        "verification": None, "digests": {}, "checks": []})
    merged = with_findings(base, extra)
    return merged.model_copy(update={"input": f"hf://{plan.repo}@{plan.commit} (--hf-job, "
                                     f"{len(plan.slices)} slices)", "hf_jobs": records})


def _slice_report(jobs: Jobs, item: SlicePlan, state: JobState
                  ) -> tuple[CertReport | None, str]:
    try:
        raw = decode(jobs.logs(state.job_id), slice_tag(item.index, item.count))
    except ChannelError as err:
        return None, str(err)
    except HubError as err:
        return None, f"its logs could not be read: {err.message}"
    try:
        return CertReport.model_validate_json(raw), ""
    except ValueError as err:
        return None, f"its report is not a cert.json: {str(err)[:200]}"


def with_findings(report: CertReport, extra: list[Finding]) -> CertReport:
    """`report` with more findings, its gate and status made no better than they allow."""
    if not extra:
        return report
    gate = report.package_gate
    codes = sorted({f.code for f in extra})
    if any(f.severity == "error" and f.code not in INCOMPLETE_CODES for f in extra):
        gate = Gate(name=gate.name, status="failed", details=f"{gate.details or ''}; "
                    f"{', '.join(codes)}".lstrip("; "))
    elif gate.status == "passed" and any(f.code in INCOMPLETE_CODES for f in extra):
        gate = Gate(name=gate.name, status="incomplete",
                    details=f"could not check everything: {', '.join(codes)}")
    status = combine_statuses([report.status, gate.status])
    return report.model_copy(update={"findings": [*report.findings, *extra],
                                     "package_gate": gate, "status": status})
