"""`meshcert job list|status|logs|cancel`: the HF Jobs that `package job` submitted, and the Jobs
client every HF Jobs command asks first. (The old mode flags `package job
--list/--status/--logs/--cancel` still work, with a deprecation warning.) Exit 0, or 3 when the
Hub cannot be reached or refuses.

The pair: this module manages submitted jobs; `job_cmd.py` plans and submits them (`package
job`), and `job_budget.py` holds what every submitting command does with a plan's cost."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated

import typer

from meshcert.cli.shared_options import json_option

if TYPE_CHECKING:
    from meshcert.hubjobs.jobs_api import HubJobs, JobState

app = typer.Typer(help="HF Jobs that `meshcert package job` submitted: list, status, logs, "
                  "cancel.", no_args_is_help=True, rich_markup_mode=None)

JobArg = Annotated[str, typer.Argument(metavar="JOB", help="The job id (as `meshcert job "
                                       "list` or `package job --confirm` printed it).")]
JsonOpt = Annotated[bool, json_option("Print the job state(s) as JSON.")]


@app.command("list")
def list_jobs(json_out: JsonOpt = False) -> None:
    """meshcert's package jobs: id, stage, flavor, labels."""
    manage(list_jobs=True, json_out=json_out)


@app.command("status")
def status(job_id: JobArg, json_out: JsonOpt = False) -> None:
    """One job's stage, flavor and labels."""
    manage(status=job_id, json_out=json_out)


@app.command("logs")
def logs(job_id: JobArg, follow: Annotated[bool, typer.Option(
        "--follow", help="Keep streaming until the job ends.")] = False) -> None:
    """A job's log lines on stdout."""
    manage(logs=job_id, follow=follow)


@app.command("cancel")
def cancel(job_id: JobArg, json_out: JsonOpt = False) -> None:
    """Cancel a job, then print its state."""
    manage(cancel=job_id, json_out=json_out)


def manage(*, status: str | None = None, logs: str | None = None, cancel: str | None = None,
           list_jobs: bool = False, follow: bool = False, json_out: bool = False) -> None:
    """One of: a job's state, its logs, cancel it, or (list_jobs) meshcert's package jobs."""
    jobs, _token = jobs_client()
    if status is not None:
        print_states([jobs.inspect(status)], json_out)
    elif logs is not None:
        for line in jobs.logs(logs, follow=follow):
            typer.echo(line.rstrip())
    elif cancel is not None:
        jobs.cancel(cancel)
        print_states([jobs.inspect(cancel)], json_out)
    elif list_jobs:
        print_states(jobs.list({"meshcert-task": "package-write"}), json_out)


def print_states(states: list[JobState], json_out: bool) -> None:
    if json_out:
        typer.echo(json.dumps([{"job_id": s.job_id, "stage": s.stage, "message": s.message,
                                "flavor": s.flavor, "labels": s.labels} for s in states],
                              indent=2))
        return
    for s in states:
        label = ", ".join(f"{k}={v}" for k, v in sorted(s.labels.items()))
        typer.echo(f"{s.job_id}  {s.stage:<10} {s.flavor or '-':<12} {label}")


def jobs_client() -> tuple[HubJobs, str]:
    """The Jobs client, once the token and the Hub answered (asked first, a few seconds at
    most): without a usable token, or with the Hub unreachable, exit 2 before any work."""
    from meshcert.cli.publish_cmd import quiet_hub_logs
    from meshcert.core.hub.access import find_token
    from meshcert.core.hub.settings import HubSettings
    from meshcert.hubjobs.jobs_api import HubJobs

    quiet_hub_logs()
    token = find_token()
    jobs = HubJobs(HubSettings.from_env(), token=token)
    jobs.identify()
    return jobs, token

