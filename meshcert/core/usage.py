"""Option rules: the checks a request's option values must pass before any work, as pure
functions that raise one `OptionError`.

Each part keeps the rules of its own request beside it (`meshcert.certify.request_options`,
`meshcert.writer.write_options`, ...); the CLI turns an `OptionError` into its usage error
for `option` (exit 2), so a rule is tested without the CLI.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from meshcert.core.errors import ErrorKind, MeshcertError

_RELEASE = re.compile(r"^\d+\.\d+(\.\d+)?$")


class OptionError(MeshcertError):
    """An option value, or a combination of options, a request cannot take (a usage error,
    exit 2). `option` names the option(s) as a user types them (e.g. `--stage`, `--layers /
    --stage`, `MODEL`)."""

    kind = ErrorKind.USAGE

    def __init__(self, message: str, option: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.option = option


def positive(value: float, option: str) -> None:
    if value <= 0:
        raise OptionError("must be > 0", option)


def within(value: int, low: int, high: int, option: str) -> None:
    if not low <= value <= high:
        raise OptionError(f"must be within {low}..{high}", option)


def is_release(text: str) -> bool:
    """`major.minor[.patch]`, digits only (a runtime ABI, a mesh-llm release)."""
    return _RELEASE.match(text) is not None


def release(value: str | None, option: str) -> None:
    if value is not None and not is_release(value):
        raise OptionError("must be major.minor[.patch]", option)


def only_with(given: Mapping[str, bool], needed: str) -> None:
    """Each option of `given` that was given only means something with `needed`."""
    for flag, was_given in given.items():
        if was_given:
            raise OptionError(f"{flag} only applies with {needed}", flag)


def not_with(given: Mapping[str, bool], other: str) -> None:
    """None of the options of `given` can be combined with `other`."""
    for flag, was_given in given.items():
        if was_given:
            raise OptionError(f"{flag} cannot be combined with {other}", other)
