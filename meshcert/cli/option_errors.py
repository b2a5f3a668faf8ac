"""A broken option rule (`OptionError`, meshcert.core.usage) becomes typer's usage error for
that option: `Invalid value for '<option>': <message>` after the usage line, exit 2. So does
an error of a class the caller names (`also`): a file an option names that cannot be used, a
usage error for `option` (or for none)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer

from meshcert.core.errors import MeshcertError
from meshcert.core.usage import OptionError


@contextmanager
def option_errors(option: str | None = None,
                  also: tuple[type[MeshcertError], ...] = ()) -> Iterator[None]:
    """Inside: an `OptionError` is raised as `typer.BadParameter` for its option, an error of
    a class in `also` as one for `option`."""
    caught: tuple[type[Exception], ...] = (OptionError, *also)
    try:
        yield
    except caught as exc:
        hint = exc.option if isinstance(exc, OptionError) else option
        raise typer.BadParameter(str(exc), param_hint=hint) from None
