"""View-model pieces both report kinds lay out the same way."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Stat:
    """A headline number in the verdict banner; `tone` picks its colour (ok, bad, warn, ...)."""

    label: str
    value: str
    tone: str = ""


@dataclass(frozen=True)
class Fact:
    """A labelled value in a definition list (provenance, method, ...)."""

    label: str
    value: str
    mono: bool = False
    note: str = ""
