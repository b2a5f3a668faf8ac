"""How a pydantic validation error reads in one line: `field.path: message; ...`.

A user's file (the serve config, the decision rules, a report) is validated by a pydantic
model; each of its problems is named by the field that holds it, the way every meshcert
message names a file's field."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pydantic import ValidationError

TOP_LEVEL = "(top level)"


def field_path(loc: tuple[int | str, ...]) -> str:
    """`('ab', 'alpha')` -> `ab.alpha`; the empty location -> `(top level)`."""
    return ".".join(str(part) for part in loc) or TOP_LEVEL


def problems(error: ValidationError) -> str:
    """Every problem of `error`, `field.path: message`, joined by `; `."""
    return "; ".join(f"{field_path(e['loc'])}: {e['msg']}" for e in error.errors())
