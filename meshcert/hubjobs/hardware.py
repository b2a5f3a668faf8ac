"""The Hub's job flavors as numbers, and the cheapest one a plan fits on.

`list_jobs_hardware()` answers strings ("8 vCPU", "32 GB", "50 GB") and a unit price with its
unit ("minute"); prices and sizes are read from it at run time, never written here
(writer.md: "never hard-code prices").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from meshcert.core.errors import Refused

_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGTP]i?)?B?\s*$", re.IGNORECASE)
_COUNT = re.compile(r"^\s*([0-9]+)")
_UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15,
          "KI": 2**10, "MI": 2**20, "GI": 2**30, "TI": 2**40, "PI": 2**50}
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400}


def parse_bytes(text: str | None) -> int | None:
    """'16 GB' -> 16e9; 'N/A' or anything unreadable -> None."""
    match = _SIZE.match(text or "")
    if match is None:
        return None
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "").upper()])


def parse_count(text: str | None) -> int | None:
    match = _COUNT.match(text or "")
    return int(match.group(1)) if match else None


@dataclass(frozen=True)
class Flavor:
    name: str
    cpus: int | None
    ram_bytes: int | None
    disk_bytes: int | None
    unit_cost_usd: float
    unit_seconds: int  # the billing unit ("minute" -> 60)
    accelerated: bool

    @property
    def usd_per_hour(self) -> float:
        return self.unit_cost_usd * 3600 / self.unit_seconds

    def cost_usd(self, seconds: float) -> float:
        """What `seconds` of it cost at most, billed per started unit."""
        units = -(-int(seconds) // self.unit_seconds)
        return units * self.unit_cost_usd


def flavor_of(info: Any) -> Flavor | None:
    """A `JobHardwareInfo` (or anything with its attributes); None when its price unit is
    unknown, so a flavor whose cost cannot be computed is never picked."""
    unit = str(getattr(info, "unit_label", "")).strip().lower().rstrip("s")
    if unit not in _SECONDS:
        return None
    return Flavor(name=str(info.name), cpus=parse_count(getattr(info, "cpu", None)),
                  ram_bytes=parse_bytes(getattr(info, "ram", None)),
                  disk_bytes=parse_bytes(getattr(info, "ephemeral_storage", None)),
                  unit_cost_usd=float(info.unit_cost_usd), unit_seconds=_SECONDS[unit],
                  accelerated=getattr(info, "accelerator", None) is not None)


@dataclass(frozen=True)
class Needs:
    disk_bytes: int
    ram_bytes: int
    cpus: int


DISK_HEADROOM = 0.8  # never plan on more than 80% of a flavor's ephemeral disk


def misfits(flavor: Flavor, needs: Needs) -> list[str]:
    """Why `flavor` cannot run a job with these needs (empty: it fits)."""
    why = []
    if flavor.disk_bytes is None or needs.disk_bytes > flavor.disk_bytes * DISK_HEADROOM:
        have = "unknown" if flavor.disk_bytes is None else f"{flavor.disk_bytes / 1e9:.0f} GB"
        why.append(f"needs {needs.disk_bytes / 1e9:.1f} GB of disk (at most 80% of its "
                   f"ephemeral storage, {have})")
    if flavor.ram_bytes is None or needs.ram_bytes > flavor.ram_bytes:
        why.append(f"needs {needs.ram_bytes / 1e9:.1f} GB of memory")
    if flavor.cpus is None or needs.cpus > flavor.cpus:
        why.append(f"needs {needs.cpus} cores")
    return why


def cheapest_fit(flavors: Iterable[Flavor], needs: Needs) -> Flavor | None:
    """The CPU flavor with the lowest hourly price that fits (None: none does)."""
    fitting = [f for f in flavors if not f.accelerated and not misfits(f, needs)]
    return min(fitting, key=lambda f: (f.usd_per_hour, f.name), default=None)


class NoFlavor(Refused):
    """No flavor of the Hub's list can run the job: the reason, in words."""


def pick_flavor(flavors: list[Flavor], name: str, needs: Needs, what: str) -> Flavor:
    """`auto`: the cheapest CPU flavor that fits; else the named one, checked. `what` names
    the job in the refusal ("a slice", "this write")."""
    if name == "auto":
        chosen = cheapest_fit(flavors, needs)
        if chosen is None:
            raise NoFlavor(f"no CPU flavor of the Hub's hardware list fits {what} "
                           f"({needs.disk_bytes / 1e9:.1f} GB of disk)")
        return chosen
    named = next((f for f in flavors if f.name == name), None)
    if named is None:
        raise NoFlavor(f"flavor {name!r} is not in the Hub's hardware list "
                       f"({', '.join(f.name for f in flavors)})")
    why = misfits(named, needs)
    if why:
        raise NoFlavor(f"flavor {name!r} does not fit {what}: {'; '.join(why)}")
    return named
