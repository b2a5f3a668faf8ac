"""The shared option rules: each raises one OptionError naming the option it is about."""

from __future__ import annotations

import pytest

from meshcert.core.usage import (
    OptionError,
    is_release,
    not_with,
    only_with,
    positive,
    release,
    within,
)


def test_positive_refuses_zero_and_below() -> None:
    positive(1, "--x")
    positive(0.5, "--x")
    for value in (0, -1, -0.1):
        with pytest.raises(OptionError) as caught:
            positive(value, "--timeout")
        assert (caught.value.message, caught.value.option) == ("must be > 0", "--timeout")


def test_within_is_inclusive_at_both_ends() -> None:
    within(1, 1, 256, "--concurrency")
    within(256, 1, 256, "--concurrency")
    with pytest.raises(OptionError, match=r"^must be within 1\.\.256$") as caught:
        within(257, 1, 256, "--concurrency")
    assert caught.value.option == "--concurrency"
    with pytest.raises(OptionError):
        within(0, 1, 256, "--concurrency")


def test_release_is_major_minor_and_optional_patch() -> None:
    assert is_release("0.79") and is_release("0.79.1")
    assert not is_release("v0.79") and not is_release("0.79.1.2") and not is_release("x.y")
    release(None, "--runtime-abi")  # not given: nothing to check
    with pytest.raises(OptionError, match=r"major\.minor\[\.patch\]"):
        release("1", "--runtime-abi")


def test_only_with_names_the_first_option_given_without_the_one_it_needs() -> None:
    only_with({"--confirm": False, "--follow": False}, "--hf-job")
    with pytest.raises(OptionError) as caught:
        only_with({"--confirm": False, "--follow": True, "--install": True}, "--hf-job")
    assert caught.value.message == "--follow only applies with --hf-job"
    assert caught.value.option == "--follow"


def test_not_with_names_the_option_it_conflicts_with() -> None:
    not_with({"--source": False}, "--hf-job")
    with pytest.raises(OptionError) as caught:
        not_with({"--source": True}, "--hf-job")
    assert caught.value.message == "--source cannot be combined with --hf-job"
    assert caught.value.option == "--hf-job"
