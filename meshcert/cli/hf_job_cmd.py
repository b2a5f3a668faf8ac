"""`models certify hf://ns/pkg@sha --package-only --hf-job --stages N`: the plan, its cost,
then (with --confirm) N jobs merged into one report. The work is in
meshcert.hubjobs.certify_slices."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, NoReturn

import typer

from meshcert.cli.exit_codes import Exit
from meshcert.cli.job_budget import end_dry_run, refuse_over_budget

if TYPE_CHECKING:
    from collections.abc import Callable

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.certify.report import CertReport
    from meshcert.certify.request_options import CertifyInput
    from meshcert.hubjobs.certify_options import CertifyJobsOptions
    from meshcert.hubjobs.certify_slices import CertifyJobsPlan
    from meshcert.hubjobs.jobs_api import HubJobs
    from meshcert.reports.registry import ReportOutputs


def _minutes(seconds: int) -> str:
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min" if seconds >= 3600 \
        else f"{seconds // 60} min"


def describe_plan(plan: CertifyJobsPlan, *, dry_run: bool) -> str:
    from meshcert.certify.stages import layer_range
    from meshcert.hubjobs.costs import CERTIFY_BYTES_PER_S, FIXED_S

    f = plan.flavor
    lines = [f"HF Jobs plan{' (dry run: nothing is submitted)' if dry_run else ''}: certify "
             f"hf://{plan.repo}@{plan.commit} in {len(plan.slices)} slice(s)"]
    for s in plan.slices:
        lines.append(f"  slice {s.label:<7} layers {layer_range(s.layer_start, s.layer_end):<9} "
                     f"hashes {s.n_bytes / 1e9:6.2f} GB in {len(s.hashed):3d} artifact(s), "
                     f"checks {len(s.artifacts):3d} ({s.loaded_bytes / 1e9:.2f} GB loaded), "
                     f"timeout {_minutes(s.timeout_s)}")
    hashed = sum(s.n_bytes for s in plan.slices)
    loaded = sum(s.loaded_bytes for s in plan.slices)
    lines += [
        f"  hashing: {hashed / 1e9:.2f} GB in all, each byte once (the stages load "
        f"{loaded / 1e9:.2f} GB: a part several of them load is hashed by one)",
        f"  flavor {f.name}: {f.cpus} vCPU, {(f.ram_bytes or 0) / 1e9:.0f} GB RAM, "
        f"{(f.disk_bytes or 0) / 1e9:.0f} GB disk, ${f.unit_cost_usd:.6f} per "
        f"{f.unit_seconds} s (${f.usd_per_hour:.4f}/h)",
        f"  each job: mounts the repo read-only at the commit, pip-installs {plan.install}, "
        f"hashes its share, checks its stage; disk planned {plan.needs.disk_bytes / 1e9:.1f} GB",
        f"  timeouts: bytes at {CERTIFY_BYTES_PER_S / 1e6:.0f} MB/s + {FIXED_S // 60} min "
        "start-up, rounded up to 5 min",
        f"  maximum cost: ${plan.max_cost_usd:.4f} (every job running to its timeout)",
    ]
    return "\n".join(lines)


def certify_on_hf_jobs(given: CertifyInput, options: CertifyJobsOptions, *,
                       report_out: str | None, json_out: bool, quiet: bool,
                       outputs: ReportOutputs,
                       signing: tuple[Ed25519PrivateKey, str] | None = None) -> NoReturn:
    """Options that passed `meshcert.hubjobs.certify_options.check_on_jobs`: the pre-flight,
    the plan and its cost, then (with --confirm) the jobs and their merged report.
    `signing` (--attest-key): the merged report is signed here, on the launching machine;
    the key never goes to a job."""
    from meshcert.cli.deliver import deliver
    from meshcert.core.hub.settings import HubSettings
    from meshcert.hubjobs.certify_slices import Launch, run_certify_jobs
    from meshcert.hubjobs.jobs_api import HubJobs

    say = (lambda _text: None) if (quiet or json_out) else (
        lambda text: typer.echo(text, err=True))
    preflight = _preflight(given, say)
    if preflight.status != "passed":
        typer.echo(f"pre-flight {preflight.status}: nothing was submitted", err=True)
        deliver(preflight, report_out=report_out, json_out=json_out, quiet=quiet,
                outputs=outputs)
    from huggingface_hub import get_token

    token = get_token()
    jobs = HubJobs(HubSettings.from_env(), token=token)
    plan = _plan(preflight, jobs, options, quiet=quiet, json_out=json_out, say=say)

    def on_state(item: object, state: object) -> None:
        say(f"slice {getattr(item, 'label', '?')}: job {getattr(state, 'job_id', '?')} "
            f"{getattr(state, 'stage', '?')}")

    def on_log(item: object, line: str) -> None:
        sys.stderr.write(f"[slice {getattr(item, 'label', '?')}] {line.rstrip()}\n")

    launch = Launch(on_state=on_state, on_log=on_log if options.follow else None)
    try:
        report = run_certify_jobs(plan, preflight, jobs, token=token, launch=launch)
    except KeyboardInterrupt:
        typer.echo("interrupted: the submitted jobs were cancelled; no report written",
                   err=True)
        raise typer.Exit(Exit.INTERRUPTED) from None
    if signing is not None:
        from meshcert.cli.attest_sign import sign_certification

        report = sign_certification(report, signing[0], signing[1], quiet=quiet)
    deliver(report, report_out=report_out, json_out=json_out, quiet=quiet, outputs=outputs)


def _preflight(given: CertifyInput, say: Callable[[str], None]) -> CertReport:
    from meshcert.hubjobs.certify_slices import preflight_report

    say(f"pre-flight: certifying {given.model} header-only with the {given.stages}-stage plan")
    return preflight_report(given.model, given.stages, runtime_abi=given.runtime_abi,
                            allow_unpinned=given.allow_unpinned, strict=given.strict)


def _plan(preflight: CertReport, jobs: HubJobs, options: CertifyJobsOptions, *, quiet: bool,
          json_out: bool, say: Callable[[str], None]) -> CertifyJobsPlan:
    """The jobs' plan, shown with its cost; a dry run or a plan above the budget ends here."""
    from meshcert.hubjobs.certify_slices import plan_certify_jobs
    from meshcert.hubjobs.commands import default_install

    plan = plan_certify_jobs(preflight, jobs.hardware(), flavor_name=options.flavor,
                             install=options.install or default_install())
    if not quiet:
        typer.echo(describe_plan(plan, dry_run=not options.confirm), err=True)
    refuse_over_budget(plan.max_cost_usd, options.max_cost_usd)
    if not options.confirm:
        end_dry_run(plan.as_json(), json_out=json_out, what=f"{len(plan.slices)} job(s)",
                    say=say)
    return plan
