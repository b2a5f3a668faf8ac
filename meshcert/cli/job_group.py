"""`meshcert job list|status|logs|cancel`: the HF Jobs that `package job` submitted. (The old
mode flags `package job --list/--status/--logs/--cancel` still work, with a deprecation
warning.) Exit 0, or 3 when the Hub cannot be reached or refuses."""

from __future__ import annotations

from typing import Annotated

import typer

from meshcert.cli import job_cmd

app = typer.Typer(help="HF Jobs that `meshcert package job` submitted: list, status, logs, "
                  "cancel.", no_args_is_help=True, rich_markup_mode=None)

JobArg = Annotated[str, typer.Argument(metavar="JOB", help="The job id (as `meshcert job "
                                       "list` or `package job --confirm` printed it).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print the job state(s) as JSON.")]


@app.command("list")
def list_jobs(json_out: JsonOpt = False) -> None:
    """meshcert's package jobs: id, stage, flavor, labels."""
    job_cmd.manage(list_jobs=True, json_out=json_out)


@app.command("status")
def status(job_id: JobArg, json_out: JsonOpt = False) -> None:
    """One job's stage, flavor and labels."""
    job_cmd.manage(status=job_id, json_out=json_out)


@app.command("logs")
def logs(job_id: JobArg, follow: Annotated[bool, typer.Option(
        "--follow", help="Keep streaming until the job ends.")] = False) -> None:
    """A job's log lines on stdout."""
    job_cmd.manage(logs=job_id, follow=follow)


@app.command("cancel")
def cancel(job_id: JobArg, json_out: JsonOpt = False) -> None:
    """Cancel a job, then print its state."""
    job_cmd.manage(cancel=job_id, json_out=json_out)
