"""A command's options become its request in one step (`meshcert.cli.request_of`): every field
of `models certify`'s requests is one of its parameters, by name, and a field without one is
an error, never a silent default."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

import pytest

from meshcert.certify.request_options import CertifyInput
from meshcert.cli.models_cmd import certify
from meshcert.cli.request_of import request_of
from meshcert.hubjobs.certify_options import CertifyJobsOptions


@pytest.mark.parametrize("request_class", [CertifyInput, CertifyJobsOptions])
def test_every_field_of_certifys_requests_is_one_of_its_options(request_class: type) -> None:
    options = inspect.signature(certify).parameters
    fields = {f.name: f for f in dataclasses.fields(request_class)}
    assert set(fields) <= set(options)
    for name, field in fields.items():  # the same default where the request has one
        if field.default is not dataclasses.MISSING:
            assert options[name].default == field.default, name


@dataclass(frozen=True)
class Example:
    model: str
    strict: bool = False


def test_the_request_takes_each_field_from_the_parameter_of_its_name() -> None:
    assert request_of(Example, {"model": "m", "strict": True, "quiet": True}) == Example(
        "m", strict=True)


def test_a_field_no_parameter_gives_is_an_error() -> None:
    with pytest.raises(KeyError, match="Example: no parameter for strict"):
        request_of(Example, {"model": "m"})
