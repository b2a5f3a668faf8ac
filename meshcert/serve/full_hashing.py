"""A certification that hashes every byte on HF Jobs (serve.toml `[hf_jobs]`): the header-only
pre-flight with the N-stage plan, the plan and its maximum cost, then, when confirmed and within
the cap, the slice jobs of `models certify --hf-job` merged into one report
(meshcert.hubjobs.certify_slices). The signing key stays in this process: a job gets the
Hub token as a job secret, nothing else.

What did not run is said, never hidden: a pre-flight that did not pass, a plan refused or above
the cap, or a dry run (`confirm = false`) keeps the header-only verdict, and its `hashing` note
says why no byte was hashed (the verdict sentence's coverage says "Hub-attested" either way).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshcert.serve.stopping import submitting

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport
    from meshcert.serve.config import HfJobsSection


@dataclass(frozen=True)
class Hashed:
    report: CertReport
    note: str  # what was hashed where, or why nothing was: the comment and /status show it


def certify_on_jobs(ref: str, section: HfJobsSection) -> Hashed:
    """hf://repo@commit certified with full hashing on HF Jobs, as far as `section` allows.
    A Hub failure (HubError) is raised: the task is tried again later."""
    from huggingface_hub import get_token

    from meshcert.core.errors import Refused
    from meshcert.core.hub.settings import HubSettings
    from meshcert.hubjobs.certify_slices import (
        Launch,
        plan_certify_jobs,
        preflight_report,
        run_certify_jobs,
    )
    from meshcert.hubjobs.commands import default_install
    from meshcert.hubjobs.jobs_api import HubJobs
    from meshcert.reports.fmt import human_bytes

    not_run = "full hashing on HF Jobs not run"
    preflight = preflight_report(ref, section.stages)
    if preflight.status != "passed":
        return Hashed(preflight, f"{not_run}: the header-only pre-flight ended "
                      f"{preflight.status}, so no job was submitted")
    token = get_token()
    jobs = HubJobs(HubSettings.from_env(), token=token)
    try:
        plan = plan_certify_jobs(preflight, jobs.hardware(), flavor_name=section.flavor,
                                 install=section.install or default_install())
    except Refused as exc:
        return Hashed(preflight, f"{not_run}: {exc}")
    what = (f"{len(plan.slices)} job(s) on {plan.flavor.name} hashing "
            f"{human_bytes(sum(s.n_bytes for s in plan.slices))}, at most "
            f"${plan.max_cost_usd:.4f}")
    if section.max_cost_usd and plan.max_cost_usd > section.max_cost_usd:
        return Hashed(preflight, f"{not_run}: the plan ({what}) is above [hf_jobs] "
                      f"max_cost_usd {section.max_cost_usd}; nothing was submitted")
    if not section.runs_jobs:
        return Hashed(preflight, f"{not_run} (dry run): the plan is {what}; set [hf_jobs] "
                      "confirm = true and max_cost_usd to submit it")
    with submitting(len(plan.slices)) as on_state:
        report = run_certify_jobs(plan, preflight, jobs, token=token,
                                  launch=Launch(on_state=on_state, poll_s=section.poll_s))
    return Hashed(report, f"hashed on HF Jobs: {what} (jobs {', '.join(plan.job_ids)})")

