"""`package write`'s and `package plan`'s option rules, without the CLI."""

from __future__ import annotations

import pytest

from meshcert.core.usage import OptionError
from meshcert.writer.write_options import (
    check_plan_options,
    check_write_options,
    package_format,
)


def test_the_format_is_v2_or_v1() -> None:
    assert package_format("v2") == "v2" and package_format("v1") == "v1"
    with pytest.raises(OptionError) as caught:
        package_format("v3")
    assert (caught.value.message, caught.value.option) == ("must be v2 or v1", "--format")


def test_write_checks_the_format_then_the_artifact_cap() -> None:
    assert check_write_options("v1", 1) == "v1"
    with pytest.raises(OptionError) as caught:
        check_write_options("v3", 0)
    assert caught.value.option == "--format"
    with pytest.raises(OptionError) as caught:
        check_write_options("v2", 0)
    assert (caught.value.message, caught.value.option) == ("must be > 0", "--max-artifact-bytes")


def test_plan_checks_the_stages_before_the_artifact_cap() -> None:
    assert check_plan_options("v2", 4, 1 << 30) == "v2"
    with pytest.raises(OptionError) as caught:
        check_plan_options("v2", 0, 0)
    assert (caught.value.message, caught.value.option) == ("must be > 0", "--stages")
    with pytest.raises(OptionError) as caught:
        check_plan_options("v2", 1, -1)
    assert caught.value.option == "--max-artifact-bytes"
