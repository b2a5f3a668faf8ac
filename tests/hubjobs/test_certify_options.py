"""`models certify --hf-job`'s option rules, without the CLI."""

from __future__ import annotations

import pytest

from meshcert.certify.request_options import CertifyInput
from meshcert.core.usage import OptionError
from meshcert.hubjobs.certify_options import (
    CertifyJobsOptions,
    check_on_jobs,
    check_without_jobs,
)

REF = "hf://ns/pkg@" + "a" * 40


def _problem(given: CertifyInput, jobs: CertifyJobsOptions) -> tuple[str, str | None]:
    with pytest.raises(OptionError) as caught:
        check_on_jobs(given, jobs)
    return caught.value.message, caught.value.option


def test_a_published_package_in_stages_within_budget_passes() -> None:
    check_on_jobs(CertifyInput(model=REF, package_only=True, stages=4),
                  CertifyJobsOptions(max_cost_usd=0.5, confirm=True))


def test_the_jobs_need_an_hf_model_stages_and_a_positive_budget() -> None:
    assert _problem(CertifyInput(model="./pkg", stages=2), CertifyJobsOptions()) == (
        "--hf-job certifies a published package: hf://ns/repo@<sha>", "MODEL")
    assert _problem(CertifyInput(model=REF), CertifyJobsOptions()) == (
        "--hf-job needs --stages N (one job per stage)", "--stages")
    assert _problem(CertifyInput(model=REF, stages=2), CertifyJobsOptions(max_cost_usd=0)) == (
        "must be > 0", "--max-cost-usd")


def test_an_option_that_needs_the_package_here_is_refused_first() -> None:
    given = CertifyInput(model="./pkg", parity="s.gguf", trust="trust.toml")
    assert _problem(given, CertifyJobsOptions()) == (
        "--parity cannot be combined with --hf-job", "--hf-job")


def test_without_jobs_their_options_are_refused() -> None:
    check_without_jobs(CertifyJobsOptions())
    for jobs, flag in ((CertifyJobsOptions(confirm=True), "--confirm"),
                       (CertifyJobsOptions(flavor="cpu-basic"), "--flavor"),
                       (CertifyJobsOptions(install="meshcert"), "--install")):
        with pytest.raises(OptionError) as caught:
            check_without_jobs(jobs)
        assert (caught.value.message, caught.value.option) == (
            f"{flag} only applies with --hf-job", flag)
