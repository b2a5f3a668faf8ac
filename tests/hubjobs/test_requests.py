"""`package job`'s option rules, asked directly (no CLI, no Hub): what the command will do, or
an OptionError naming the option, in the order the command checks them."""

from __future__ import annotations

import pytest

from meshcert.core.usage import OptionError
from meshcert.hubjobs.requests import (
    PackageJobRequest,
    check_max_cost,
    job_mode,
    package_job_request,
    parse_duration,
)


@pytest.mark.parametrize(("text", "seconds"), [
    ("7200", 7200), ("90m", 5400), ("2h", 7200), ("1d", 86400), (" 1.5h ", 5400), ("30s", 30),
])
def test_durations_read_as_hf_jobs_takes_them(text: str, seconds: int) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["0", "0m", "-5", "2w", "h", "", "1 hour"])
def test_a_duration_hf_jobs_cannot_take_is_a_timeout_error(text: str) -> None:
    with pytest.raises(OptionError) as caught:
        parse_duration(text)
    assert caught.value.option == "--timeout"
    assert caught.value.message == "give seconds, or a number with s, m, h or d"


@pytest.mark.parametrize("limit", [0.0, -1.0])
def test_a_cost_limit_is_positive(limit: float) -> None:
    with pytest.raises(OptionError) as caught:
        check_max_cost(limit)
    assert (caught.value.message, caught.value.option) == ("must be > 0", "--max-cost-usd")
    check_max_cost(None)
    check_max_cost(0.01)


def test_the_mode_is_the_one_thing_given() -> None:
    assert job_mode("org/repo:Q4_K_M") == "SOURCE"
    assert job_mode(None, status="abc") == "--status"
    assert job_mode(None, logs="abc") == "--logs"
    assert job_mode(None, cancel="abc") == "--cancel"
    assert job_mode(None, list_jobs=True) == "--list"


@pytest.mark.parametrize("given", [
    {}, {"list_jobs": True, "status": "abc"}, {"source": "org/repo:Q4_K_M", "cancel": "abc"},
])
def test_none_or_two_modes_are_refused_naming_source(given: dict[str, object]) -> None:
    source = given.pop("source", None)
    with pytest.raises(OptionError) as caught:
        job_mode(source, **given)  # type: ignore[arg-type]
    assert caught.value.option == "SOURCE"
    assert caught.value.message == ("give SOURCE --target NS/REPO, or one of --status ID, "
                                    "--logs ID, --cancel ID, --list")


def test_a_request_carries_the_options_with_the_timeout_in_seconds() -> None:
    request = package_job_request("org/repo:Q4_K_M", target="me/pkg", timeout="2h",
                                  confirm=True, max_cost_usd=1.5, fmt="v1", catalog="me/cat")
    assert request == PackageJobRequest("org/repo:Q4_K_M", "me/pkg", timeout_s=7200,
                                        confirm=True, max_cost_usd=1.5, fmt="v1",
                                        catalog="me/cat")


@pytest.mark.parametrize(("given", "option", "message"), [
    # every option wrong at once: the first rule in the command's order speaks
    ({"dry_run": True, "confirm": True, "target": None, "fmt": "v3", "timeout": "x"},
     "--confirm", "--dry-run and --confirm contradict"),
    ({"target": None, "fmt": "v3", "max_cost_usd": 0.0}, "--target", "needs --target NS/REPO"),
    ({"target": "me/pkg", "fmt": "v3", "max_cost_usd": 0.0}, "--format", "must be v2 or v1"),
    ({"target": "me/pkg", "max_cost_usd": 0.0, "timeout": "x"}, "--max-cost-usd",
     "must be > 0"),
    ({"target": "me/pkg", "timeout": "x"}, "--timeout",
     "give seconds, or a number with s, m, h or d"),
])
def test_the_rules_speak_in_the_commands_order(given: dict[str, object], option: str,
                                               message: str) -> None:
    with pytest.raises(OptionError) as caught:
        package_job_request("org/repo:Q4_K_M", **given)  # type: ignore[arg-type]
    assert (caught.value.option, caught.value.message) == (option, message)
