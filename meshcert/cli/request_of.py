"""A command's options become its request in one step: `request_of(Request, params)` builds
the dataclass from the command's parameter values named as its fields, so a value is named
where the option is declared and where the request declares it, and nowhere in between."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def request_of(cls: type[T], params: Mapping[str, Any]) -> T:
    """`cls` (a dataclass) from `params` (a command's `locals()` on entry): each field from the
    parameter of its name. A field the command does not take is a KeyError here, at the first
    run of the command (a test of each command runs it), never a silent default."""
    names = [field.name for field in dataclasses.fields(cls) if field.init]  # type: ignore[arg-type]
    missing = [name for name in names if name not in params]
    if missing:
        raise KeyError(f"{cls.__name__}: no parameter for {', '.join(missing)}")
    return cls(**{name: params[name] for name in names})
