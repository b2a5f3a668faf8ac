"""Checks: pure functions from a PackageView to findings, registered with the codes they emit.

Every module in this package is imported by `all_checks()`, so adding a check is adding a
module with `@register(...)` functions; find a check by grepping its finding code.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from meshcert.certify.view import PackageView
from meshcert.core.codes import CODES
from meshcert.core.findings import Finding

CheckFunc = Callable[[PackageView], Iterable[Finding]]


@dataclass(frozen=True)
class Check:
    name: str
    codes: frozenset[str]
    func: CheckFunc
    order: int
    formats: frozenset[str] = frozenset({"v1", "v2"})

    def applies_to(self, package_format: str | None) -> bool:
        """Format-specific checks (schema rules) run only on their format; a manifest of an
        unsupported version is checked as v1, so its problems are still listed."""
        return (package_format or "v1") in self.formats


_REGISTRY: dict[str, Check] = {}


def register(name: str, codes: Iterable[str], order: int = 100,
             formats: Iterable[str] = ("v1", "v2")) -> Callable[[CheckFunc], CheckFunc]:
    """Register a check group. `codes` are every code it may emit (all must be catalogued);
    lower `order` runs first (only affects the order findings are listed); `formats` are the
    package formats it applies to (schema checks are format-specific, the rest are not)."""
    code_set = frozenset(codes)
    unknown = sorted(code_set - CODES.keys())
    if unknown:
        raise KeyError(f"check {name!r} declares codes missing from the catalog: {unknown}")

    def decorate(func: CheckFunc) -> CheckFunc:
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"check {name!r} registered twice")
        _REGISTRY[name] = Check(name, code_set, func, order, frozenset(formats))
        return func

    return decorate


def all_checks() -> list[Check]:
    for name in _check_modules():
        importlib.import_module(f"{__name__}.{name}")
    return sorted(_REGISTRY.values(), key=lambda c: (c.order, c.name))


def _check_modules() -> list[str]:
    """The check modules in this package's directory (a directory listing: `pkgutil` would
    cost more to import than listing it)."""
    return sorted(entry.name.removesuffix(".py") for directory in __path__
                  for entry in os.scandir(directory)
                  if entry.name.endswith(".py") and not entry.name.startswith("_"))
