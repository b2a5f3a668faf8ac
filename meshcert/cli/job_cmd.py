"""`meshcert package job`: write, publish and certify a package on HF Jobs (a dry run unless
--confirm), and follow the job to its certification. The work is in
meshcert.hubjobs.package_job; the options' rules in meshcert.hubjobs.requests; the submitted
jobs are managed by `meshcert job ...` (job_group.py, which also gives the Jobs client)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from meshcert.cli import job_group
from meshcert.cli.exit_codes import Exit
from meshcert.cli.job_budget import end_dry_run, refuse_over_budget
from meshcert.cli.job_group import jobs_client
from meshcert.cli.option_errors import option_errors
from meshcert.cli.shared_options import (
    CatalogTargetOpt,
    PackageFormatOpt,
    catalog_target,
    json_option,
)

if TYPE_CHECKING:
    from meshcert.hubjobs.jobs_api import HubJobs, JobState
    from meshcert.hubjobs.package_job import PackageJobPlan
    from meshcert.hubjobs.requests import PackageJobRequest

FAILED, INCOMPLETE = Exit.FAILED, Exit.INCOMPLETE


def describe(plan: PackageJobPlan, *, dry_run: bool) -> str:
    from meshcert.hubjobs.costs import FIXED_S, WRITE_BYTES_PER_S

    f = plan.flavor
    lines = [f"HF Jobs plan{' (dry run: nothing is submitted)' if dry_run else ''}: "
             f"{plan.source} -> {plan.target}",
             f"  source {plan.repo} at commit {plan.commit} (mounted read-only at /source)"]
    lines += [f"    {path}  {size:,} bytes" for path, size in plan.files]
    lines += [
        f"  package {plan.fmt}: {plan.artifacts} artifacts, {plan.package_bytes:,} bytes "
        f"(largest {plan.largest_artifact:,}); model id {plan.model_id}",
        f"  disk needed: {plan.disk_bytes_needed / 1e9:.2f} GB (streaming write: each artifact "
        "uploaded and deleted as it is done)",
        f"  flavor {f.name}: {f.cpus} vCPU, {(f.ram_bytes or 0) / 1e9:.0f} GB RAM, "
        f"{(f.disk_bytes or 0) / 1e9:.0f} GB disk, ${f.usd_per_hour:.4f}/h",
        f"  timeout {plan.timeout_s} s ({plan.timeout_s / 3600:.2f} h: source bytes at "
        f"{WRITE_BYTES_PER_S / 1e6:.0f} MB/s + {FIXED_S // 60} min start-up, rounded up)",
        f"  maximum cost: ${plan.max_cost_usd:.4f}",
        f"  installs {plan.install}; catalog: {plan.catalog or 'none'}"
        + (" (experimental: a pull request)" if plan.experimental else ""),
    ]
    lines += [f"  publisher metadata: /source/{basename} (read in the job at the commit)"
              for basename in plan.publisher_files]
    if plan.publisher_defaults is not None:
        lines.append("  publisher defaults: " + (", ".join(
            f"{slot} {d['dtype']} ({d['artifact_id']} {d['json_path']})"
            for slot, d in plan.publisher_defaults.items()) or "{} (none declared)"))
    if plan.generation_defaults is not None:
        lines.append("  generation defaults: validated here, passed to the job as "
                     "GENERATION_DEFAULTS_JSON")
    lines += [f"  note: {n}" for n in plan.notes]
    return "\n".join(lines)


SourceArg = Annotated[str | None, typer.Argument(
    metavar="SOURCE", help="org/repo[@rev]:QUANT or hf://org/repo@rev/path.gguf")]
TargetOpt = Annotated[str | None, typer.Option("--target", metavar="NS/REPO",
                                               help="The model repo the package goes to.")]
ModelIdOpt = Annotated[str | None, typer.Option(
    help="Model coordinate for the manifest (default: SOURCE's org/repo:QUANT).")]
TimeoutOpt = Annotated[str | None, typer.Option(
    help="Job timeout (seconds, or 90m, 2h, 1d; default: from the source size).")]
ExperimentalOpt = Annotated[bool, typer.Option(
    "--experimental", help="Public with a warning; the catalog entry is a pull request.")]
DryRunOpt = Annotated[bool, typer.Option(
    "--dry-run", help="Print the plan and its cost; submit nothing (the default).")]
ConfirmOpt = Annotated[bool, typer.Option("--confirm", help="Submit the job (spends money).")]
FollowOpt = Annotated[bool, typer.Option(
    "--follow", help="Stream the job's logs and end with its final stage.")]
StatusOpt = Annotated[str | None, typer.Option(
    "--status", metavar="ID", help="Deprecated: `meshcert job status ID`.")]
LogsOpt = Annotated[str | None, typer.Option(
    "--logs", metavar="ID", help="Deprecated: `meshcert job logs ID [--follow]`.")]
CancelOpt = Annotated[str | None, typer.Option(
    "--cancel", metavar="ID", help="Deprecated: `meshcert job cancel ID`.")]
ListOpt = Annotated[bool, typer.Option(
    "--list", help="Deprecated: `meshcert job list` (meshcert's package jobs).")]
FlavorOpt = Annotated[str, typer.Option(
    help="auto (the cheapest that fits) or a flavor of the Hub's hardware list.")]
MaxCostOpt = Annotated[float | None, typer.Option(
    help="Refuse a plan whose maximum cost is above this.")]
InstallOpt = Annotated[str | None, typer.Option(
    help="What the job pip-installs (default meshcert==<this version>).")]
NoPublisherMetadataOpt = Annotated[bool, typer.Option(
    "--no-publisher-metadata", help="Do not add the publisher files (config.json, ...) "
    "present at the source commit (by default the job adds every one, as mesh-llm's "
    "does).")]
GenerationDefaultsOpt = Annotated[str | None, typer.Option(
    "--generation-defaults", metavar="FILE", help="A GenerationRequestDefaults JSON "
    "file, validated here and passed to the job as GENERATION_DEFAULTS_JSON.")]
JsonOpt = Annotated[bool, json_option("Print the plan (or job) as JSON.")]
AttestKeyOpt = Annotated[str | None, typer.Option(
    "--attest-key", metavar="NAME.key", help="The job signs the published commit's passed "
    "certification (attestations/meshcert.intoto.jsonl); the key reaches it as an HF Jobs "
    "secret only.")]

_DEPRECATED_MODES = {"--status": "status ID", "--logs": "logs ID", "--cancel": "cancel ID",
                     "--list": "list"}


def job(
    source: SourceArg = None,
    target: TargetOpt = None,
    model_id: ModelIdOpt = None,
    timeout: TimeoutOpt = None,
    experimental: ExperimentalOpt = False,
    dry_run: DryRunOpt = False,
    confirm: ConfirmOpt = False,
    follow: FollowOpt = False,
    status: StatusOpt = None,
    logs: LogsOpt = None,
    cancel: CancelOpt = None,
    list_jobs: ListOpt = False,
    flavor: FlavorOpt = "auto",
    max_cost_usd: MaxCostOpt = None,
    fmt: PackageFormatOpt = "v2",
    install: InstallOpt = None,
    catalog: CatalogTargetOpt = None,
    no_publisher_metadata: NoPublisherMetadataOpt = False,
    generation_defaults: GenerationDefaultsOpt = None,
    json_out: JsonOpt = False,
    attest_key: AttestKeyOpt = None,
) -> None:
    """Write, publish and certify a package on HF Jobs (manage the jobs with `meshcert job
    list|status|logs|cancel`). Exit 0 (a dry
    run, a submitted job, or with --follow a COMPLETED job whose package certified passed),
    1 failed, 2 refused or usage, 3 incomplete (cancelled, unreachable)."""
    from meshcert.hubjobs.requests import job_mode, package_job_request

    with option_errors():
        mode = job_mode(source, status=status, logs=logs, cancel=cancel,
                        list_jobs=list_jobs)
    if source is None:
        typer.echo(f"warning: `package job {mode}` is deprecated; use `meshcert job "
                   f"{_DEPRECATED_MODES[mode]}`", err=True)
        job_group.manage(status=status, logs=logs, cancel=cancel, list_jobs=list_jobs,
                         follow=follow, json_out=json_out)
        return
    with option_errors():
        request = package_job_request(
            source, target=target, model_id=model_id, timeout=timeout,
            experimental=experimental, dry_run=dry_run, confirm=confirm, follow=follow,
            flavor=flavor, max_cost_usd=max_cost_usd, fmt=fmt, install=install,
            catalog=catalog_target(catalog), no_publisher_metadata=no_publisher_metadata,
            generation_defaults=generation_defaults, attest_key=attest_key)
    _plan_and_run(request, json_out=json_out)


def _plan_and_run(request: PackageJobRequest, *, json_out: bool) -> None:
    from meshcert.hubjobs.commands import default_install
    from meshcert.hubjobs.package_job import REPO_ID, job_spec, plan_package_job

    key_pem = _attest_key_pem(request.attest_key)
    jobs, token = jobs_client()
    catalog, confirm = request.catalog, request.confirm
    plan = plan_package_job(request.source, target=request.target,
                            model_id=request.model_id, fmt=request.fmt,
                            flavors=jobs.hardware(), flavor_name=request.flavor,
                            timeout_s=request.timeout_s,
                            install=request.install or default_install(),
                            catalog=catalog, experimental=request.experimental,
                            whoami=jobs.whoami(),
                            no_publisher_metadata=request.no_publisher_metadata,
                            generation_defaults=request.generation_defaults,
                            catalog_readable=None if catalog is None
                            or not REPO_ID.match(catalog)
                            else jobs.dataset_readable(catalog))
    plan.attest = key_pem is not None
    typer.echo(describe(plan, dry_run=not confirm), err=True)
    refuse_over_budget(plan.max_cost_usd, request.max_cost_usd)
    if not confirm:
        end_dry_run(plan.as_json(), json_out=json_out, what="it",
                    say=lambda text: typer.echo(text, err=True))
    state = jobs.run(job_spec(plan, token, key_pem))
    plan.job_id = state.job_id
    if json_out:
        typer.echo(json.dumps(plan.as_json(), indent=2))
    typer.echo(f"submitted job {state.job_id} ({state.stage}); its logs: `meshcert job logs "
               f"{state.job_id} --follow`, its state: `meshcert job status {state.job_id}`",
               err=True)
    if request.follow:
        _follow_to_the_end(jobs, state.job_id)


def _attest_key_pem(attest_key: str | None) -> str | None:
    """The key as the job's secret: read and checked here (a bad key is a usage error before
    any job), PKCS#8 PEM without a passphrase (the job has none to give)."""
    if attest_key is None:
        return None
    from cryptography.hazmat.primitives import serialization

    from meshcert.cli.attest_cmd import load_signing_key

    key = load_signing_key(attest_key)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode("ascii")


def _follow_to_the_end(jobs: HubJobs, job_id: str) -> None:
    """Show the job's own log lines on stderr as they come (blank lines dropped; the report
    channel's base64 chunks kept back and decoded, not shown), then its final stage and the
    package's certification."""
    import threading

    from meshcert.hubjobs.report_channel import is_channel_line

    channel: list[str] = []
    for line in jobs.logs(job_id, follow=True):
        text = line.rstrip()
        if is_channel_line(text):
            if not channel:
                typer.echo("[job] (its certification report is coming back through "
                           "the logs; decoded below)", err=True)
            channel.append(text)
        elif text.strip():
            sys.stderr.write(f"[job] {text}\n")
    sys.stderr.flush()
    state = jobs.inspect(job_id)
    while not state.finished:
        threading.Event().wait(2.0)
        state = jobs.inspect(job_id)
    typer.echo(f"job {job_id}: {state.stage}" + (f" ({state.message})" if state.message
                                                 else ""))
    _report_from_the_logs(jobs, job_id, channel, state)


def _report_from_the_logs(jobs: HubJobs, job_id: str, channel: list[str], state: JobState
                          ) -> None:
    """The job's certification, decoded from the report channel (the streamed lines, else
    the whole log read again), and the exit status it decides."""
    from meshcert.hubjobs.package_job import returned_report

    report = returned_report(channel, lambda: jobs.logs(job_id))
    if isinstance(report, str):
        typer.echo(f"no certification came back from the job: {report}", err=True)
        raise typer.Exit(INCOMPLETE if state.stage in ("CANCELED", "COMPLETED") else FAILED)
    typer.echo(f"package: {report.resolved_package_ref}; certification: {report.status}")
    if report.status == "passed" and state.stage == "COMPLETED":
        typer.echo(f"run it: mesh-llm serve --model {report.resolved_package_ref} --split")
        raise typer.Exit(Exit.PASSED)
    raise typer.Exit(INCOMPLETE if report.status == "incomplete" or state.stage == "CANCELED"
                     else FAILED)


