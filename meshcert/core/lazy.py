"""A package face whose names load on first use (PEP 562): importing the package, or a light
submodule of it, does not import what its heavier submodules need (pandas, jinja2, ...).

    __getattr__ = lazy_exports(__name__, {"ingest": ("ingest_files", "IngestResult"),
                                          "columns": ("COLUMNS",)})

Each submodule (relative to the package) lists the names it defines that the package exports.
The first access imports the submodule and keeps the value on the package, so later accesses are
plain attribute lookups. The package also imports the same names under `if TYPE_CHECKING:`, for
type checkers, and lists them in `__all__`.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, homes: Mapping[str, tuple[str, ...]]) -> Callable[[str], Any]:
    """The package's module `__getattr__`: each name of `homes[submodule]` loads from
    `package.submodule` when first asked for."""
    home_of = {name: submodule for submodule, names in homes.items() for name in names}

    def __getattr__(name: str) -> Any:
        submodule = home_of.get(name)
        if submodule is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{submodule}"), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
