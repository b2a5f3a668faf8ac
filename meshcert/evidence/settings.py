"""The one place the GLM52_PHASE_E_* environment variables (and their CLI overrides) are parsed.

Flags follow the script: an integer, 0 = off, any other integer = on. Thresholds are positive
finite numbers. An empty variable means its default. Anything else raises `SettingsError` with a
message naming the variable, the bad value and what is expected.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.rules import (
    ENV_BY_NAME,
    ENV_VARS,
    KERNEL_SWEEP,
    REQUIRE_GATES,
    ROUTED_WHOLE_GRAPH_SANITY,
    EnvVar,
)

Source = Literal["default", "env", "flag"]


class SettingsError(EvidenceError):
    """An environment variable or override that cannot be used."""


@dataclass(frozen=True)
class EvidenceSettings:
    values: Mapping[str, float] = field(default_factory=dict)  # flags as 0.0 / 1.0
    sources: Mapping[str, Source] = field(default_factory=dict)
    raw: Mapping[str, str] = field(default_factory=dict)  # the text each value came from

    def get(self, name: str) -> float:
        if name in self.values:
            return self.values[name]
        return _parse(ENV_BY_NAME[name], ENV_BY_NAME[name].default)

    def knows(self, name: str) -> bool:
        """A built-in variable, or one a user's decision rules file declared when these were
        loaded."""
        return name in self.values or name in ENV_BY_NAME

    def source(self, name: str) -> Source:
        return self.sources.get(name, "default")

    def flag(self, name: str) -> bool:
        return self.get(name) != 0

    @property
    def require_gates(self) -> bool:
        return self.flag(REQUIRE_GATES)

    @property
    def kernel_sweep(self) -> bool:
        return self.flag(KERNEL_SWEEP)

    @property
    def sanity(self) -> bool:
        return self.flag(ROUTED_WHOLE_GRAPH_SANITY)


def _parse(var: EnvVar, text: str) -> float:
    value = text.strip()
    if var.kind == "flag":
        try:
            return 0.0 if int(value) == 0 else 1.0
        except ValueError:
            raise SettingsError(
                f"invalid {var.name}={text!r}: expected an integer (0 = off, non-zero = on)"
            ) from None
    try:
        number = float(value)
    except ValueError:
        number = math.nan
    if not math.isfinite(number) or number <= 0:
        raise SettingsError(
            f"invalid {var.name}={text!r}: expected a positive number such as {var.default}")
    return number


def load_settings(environ: Mapping[str, str] | None = None,
                  overrides: Mapping[str, float | bool | str] | None = None,
                  extra: Sequence[EnvVar] = ()) -> EvidenceSettings:
    """Effective settings: overrides (CLI flags) > environment > defaults.

    `environ` defaults to `os.environ`; unknown override names raise SettingsError. `extra`:
    threshold variables a user's decision rules file declares (parsed like the built-in ratios).
    """
    env = os.environ if environ is None else environ
    values: dict[str, float] = {}
    sources: dict[str, Source] = {}
    raw: dict[str, str] = {}
    for var in (*ENV_VARS, *extra):
        text = env.get(var.name, "")
        if text.strip():
            values[var.name] = _parse(var, text)
            sources[var.name] = "env"
            raw[var.name] = text
        else:
            values[var.name] = _parse(var, var.default)
            sources[var.name] = "default"
            raw[var.name] = var.default
    for name, override in (overrides or {}).items():
        if name not in ENV_BY_NAME:
            raise SettingsError(f"unknown setting {name!r}")
        text = str(int(override)) if isinstance(override, bool) else str(override)
        values[name] = _parse(ENV_BY_NAME[name], text)
        sources[name] = "flag"
        raw[name] = text
    return EvidenceSettings(values, sources, raw)
