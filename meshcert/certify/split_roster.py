"""mesh-llm's split-serving roster (`split-certified.json`, mesh-llm-0.79.md §3.4), as meshcert
ships it (meshcert/certify/data/split-certified.json, refreshed by scripts/refresh_split_roster.py).

mesh-llm bundles the roster at build time; `mesh-llm serve --split` admits an architecture on it
and refuses any other unless `--allow-uncertified-split` is given. `models certify` never
consults it, so here it is a warning, not a gate. The file keeps mesh-llm's three keys
(`schema_version`, `native_recipe`, `architectures`) and adds a `meshcert` object saying where
and when it was read and whether the list is complete (`partial`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

ROSTER_RESOURCE = "split-certified.json"
RECIPE_KEYS = ("llama_upstream_sha", "skippy_abi", "patch_queue_sha256")


class RosterError(ValueError):
    """The roster file is not in mesh-llm's schema 2 shape."""


@dataclass(frozen=True)
class SplitRoster:
    native_recipe: dict[str, str]
    architectures: frozenset[str]
    source: str | None = None
    commit: str | None = None
    retrieved: str | None = None
    partial: bool = False

    def certifies(self, architecture: str) -> bool:
        return architecture in self.architectures


def roster_from_json(document: Any) -> SplitRoster:
    """Read a roster in mesh-llm's shape (schema_version 2, the three recipe values, a list of
    architecture names), with meshcert's optional `meshcert` provenance object."""
    if not isinstance(document, dict) or document.get("schema_version") != 2:
        raise RosterError("split-certified.json must be an object with schema_version 2")
    recipe = document.get("native_recipe")
    if not isinstance(recipe, dict) or not all(
            isinstance(recipe.get(k), str) and recipe[k] for k in RECIPE_KEYS):
        raise RosterError("native_recipe must hold " + ", ".join(RECIPE_KEYS))
    names = document.get("architectures")
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise RosterError("architectures must be a list of non-empty strings")
    about = document.get("meshcert")
    about = about if isinstance(about, dict) else {}

    def text(key: str) -> str | None:
        value = about.get(key)
        return value if isinstance(value, str) else None

    return SplitRoster({k: str(recipe[k]) for k in RECIPE_KEYS}, frozenset(names),
                       source=text("source"), commit=text("commit"),
                       retrieved=text("retrieved"), partial=about.get("partial") is True)


@cache
def bundled_roster() -> SplitRoster:
    """The roster shipped with meshcert (package data)."""
    raw = resources.files("meshcert.certify").joinpath("data", ROSTER_RESOURCE).read_text("utf-8")
    return roster_from_json(json.loads(raw))
