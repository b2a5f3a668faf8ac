"""A validation error names each problem by the field that holds it."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from meshcert.core.validation import TOP_LEVEL, field_path, problems


class Inner(BaseModel):
    alpha: float


class Outer(BaseModel):
    ab: Inner
    rounds: list[int]


def test_a_nested_field_is_named_by_its_path() -> None:
    assert field_path(("ab", "alpha")) == "ab.alpha"
    assert field_path(("rounds", 2)) == "rounds.2"
    assert field_path(()) == TOP_LEVEL


def test_every_problem_is_listed_in_one_line() -> None:
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate({"ab": {"alpha": "x"}, "rounds": [1, "two"]})
    text = problems(caught.value)
    assert "\n" not in text
    assert text.startswith("ab.alpha: Input should be a valid number")
    assert "; rounds.1: Input should be a valid integer" in text


def test_a_file_that_is_not_an_object_is_a_top_level_problem() -> None:
    with pytest.raises(ValidationError) as caught:
        Outer.model_validate([1, 2])
    assert problems(caught.value).startswith(f"{TOP_LEVEL}: Input should be")
