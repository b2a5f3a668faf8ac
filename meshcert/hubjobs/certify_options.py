"""`models certify --hf-job`'s options and their rules: which ones need --hf-job, which ones
cannot go with it, and what a certification on HF Jobs needs (a published package, --stages N,
a positive budget). Each rule raises one `OptionError` (meshcert.core.usage)."""

from __future__ import annotations

from dataclasses import dataclass

from meshcert.certify.request_options import CertifyInput, local_only_options
from meshcert.core.usage import OptionError, not_with, only_with, positive


@dataclass(frozen=True)
class CertifyJobsOptions:
    """How the jobs run: the flavor (auto: the cheapest that fits), what each pip-installs,
    whether to submit (`confirm`) and stream their logs (`follow`), the budget."""

    flavor: str = "auto"
    install: str | None = None
    confirm: bool = False
    follow: bool = False
    max_cost_usd: float | None = None

    def given(self) -> dict[str, bool]:
        """Each option by whether it was given (set away from its default)."""
        return {"--confirm": self.confirm, "--follow": self.follow,
                "--max-cost-usd": self.max_cost_usd is not None,
                "--flavor": self.flavor != "auto", "--install": self.install is not None}


def check_without_jobs(jobs: CertifyJobsOptions) -> None:
    """Without --hf-job, none of the jobs' options means anything."""
    only_with(jobs.given(), "--hf-job")


def check_on_jobs(given: CertifyInput, jobs: CertifyJobsOptions) -> None:
    """With --hf-job: no option that needs the package here, an hf:// MODEL, --stages N and a
    positive --max-cost-usd."""
    not_with(local_only_options(given), "--hf-job")
    if not given.model.startswith("hf://"):
        raise OptionError("--hf-job certifies a published package: hf://ns/repo@<sha>", "MODEL")
    if given.stages is None:
        raise OptionError("--hf-job needs --stages N (one job per stage)", "--stages")
    if jobs.max_cost_usd is not None:
        positive(jobs.max_cost_usd, "--max-cost-usd")
