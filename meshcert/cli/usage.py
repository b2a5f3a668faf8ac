"""An option rule's `OptionError` (meshcert.core.options) as typer's usage error: the same
`Invalid value for OPTION: message` line and exit status 2 as an option typer checks itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import typer

from meshcert.core.options import OptionError

T = TypeVar("T")


def bad_parameter(exc: OptionError) -> typer.BadParameter:
    return typer.BadParameter(exc.message, param_hint=exc.option)


def parsed(build: Callable[[], T]) -> T:
    """`build()` (a request built from the options, or a rule's answer), or a usage error."""
    try:
        return build()
    except OptionError as exc:
        raise bad_parameter(exc) from None
