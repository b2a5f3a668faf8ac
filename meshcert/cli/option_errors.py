"""A broken option rule (`OptionError`, meshcert.core.usage) becomes typer's usage error for
that option: `Invalid value for '<option>': <message>` after the usage line, exit 2."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from meshcert.core.usage import OptionError


@contextmanager
def option_errors() -> Iterator[None]:
    """Inside: an `OptionError` is raised as `typer.BadParameter` for its option."""
    try:
        yield
    except OptionError as exc:
        raise typer.BadParameter(exc.message, param_hint=exc.option) from None
