"""Timeouts and maximum costs follow from bytes at the stated rates."""

from __future__ import annotations

from meshcert.hubjobs.costs import (
    CERTIFY_BYTES_PER_S,
    FIXED_S,
    WRITE_BYTES_PER_S,
    Budget,
    streaming_write_disk,
    timeout_for,
)
from meshcert.hubjobs.hardware import Flavor

BASIC = Flavor("cpu-basic", 2, 16 * 10**9, 50 * 10**9, 0.01 / 60, 60, False)


def test_a_134_gb_package_gets_about_two_hours_to_write() -> None:
    seconds = timeout_for(134 * 10**9, WRITE_BYTES_PER_S)
    assert seconds == 6300  # 15 min + 134e9 / 25e6 = 6260 s, rounded up to 5 minutes
    assert seconds % 300 == 0


def test_a_small_job_still_gets_its_start_up_time() -> None:
    assert timeout_for(0, CERTIFY_BYTES_PER_S) == FIXED_S


def test_the_maximum_cost_is_the_timeout_of_every_job() -> None:
    budget = Budget(timeout_s=3600, jobs=4, flavor=BASIC)
    assert budget.max_cost_usd == round(4 * 60 * (0.01 / 60), 6) == 0.04


def test_a_streaming_write_needs_a_few_artifacts_of_disk_not_the_package() -> None:
    assert streaming_write_disk(2 * 10**9) == 4 * 2 * 10**9 + (1 << 30)
