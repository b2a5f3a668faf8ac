"""mesh-llm's split-serving roster (`split-certified.json`, mesh-llm-0.79.md §3.4), as meshcert
ships it (meshcert/certify/data/split-certified.json, refreshed by scripts/refresh_split_roster.py).

mesh-llm bundles the roster at build time; `mesh-llm serve --split` admits an architecture on it
and refuses any other unless `--allow-uncertified-split` is given. `models certify` never
consults it, so here it is a warning, not a gate. The file keeps mesh-llm's three keys
(`schema_version`, `native_recipe`, `architectures`) and adds a `meshcert` object saying where
and when it was read and whether the list is complete (`partial`), and may list the `recipes`
known for the same architecture list (mesh-llm-0.79.md §6.4: two 0.1.67 recipes differ only in
their llama.cpp pin and patch-queue hash). The recipe used is the one marked `newest`, else the
file's own `native_recipe`; reports name it (`RosterRecipe.label`), so "the architecture is on
the roster" is said apart from "the recipe equals a runtime's".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from meshcert.core.errors import MeshcertError

ROSTER_RESOURCE = "split-certified.json"
RECIPE_KEYS = ("llama_upstream_sha", "skippy_abi", "patch_queue_sha256")


class RosterError(MeshcertError, ValueError):
    """The roster file is not in mesh-llm's schema 2 shape."""


@dataclass(frozen=True)
class RosterRecipe:
    """One native recipe the architecture list was certified under (a value not read: None)."""

    values: dict[str, str | None]
    commit: str | None = None  # the mesh-llm commit of the split-certified.json holding it

    @property
    def known(self) -> dict[str, str]:
        return {k: v for k, v in self.values.items() if v is not None}

    @property
    def label(self) -> str:
        where = f"mesh-llm @{self.commit[:8]}" if self.commit else "mesh-llm"
        abi, pin = self.values.get("skippy_abi"), self.values.get("llama_upstream_sha")
        return (f"{where} (skippy ABI {abi or 'unknown'}, llama.cpp "
                f"{pin[:8] if pin else 'unknown'})")


@dataclass(frozen=True)
class SplitRoster:
    native_recipe: dict[str, str]
    architectures: frozenset[str]
    source: str | None = None
    commit: str | None = None
    retrieved: str | None = None
    partial: bool = False
    recipes: tuple[RosterRecipe, ...] = ()
    newest: int | None = None  # index into recipes of the one marked newest

    def certifies(self, architecture: str) -> bool:
        return architecture in self.architectures

    @property
    def recipe(self) -> RosterRecipe:
        """The recipe meshcert applies: the newest listed, else the file's own."""
        if self.newest is not None:
            return self.recipes[self.newest]
        return RosterRecipe(dict(self.native_recipe), self.commit)


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

    recipes, newest = _recipes(about.get("recipes"))
    return SplitRoster({k: str(recipe[k]) for k in RECIPE_KEYS}, frozenset(names),
                       source=text("source"), commit=text("commit"),
                       retrieved=text("retrieved"), partial=about.get("partial") is True,
                       recipes=recipes, newest=newest)


def _recipes(items: object) -> tuple[tuple[RosterRecipe, ...], int | None]:
    """meshcert's list of the recipes known for this architecture list; at most one newest."""
    if items is None:
        return (), None
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise RosterError("meshcert.recipes must be a list of objects")
    out: list[RosterRecipe] = []
    newest: list[int] = []
    for index, item in enumerate(items):
        values = {k: item.get(k) for k in RECIPE_KEYS}
        if not all(v is None or (isinstance(v, str) and v) for v in values.values()) \
                or not any(values.values()):
            raise RosterError(f"meshcert.recipes[{index}] must give {', '.join(RECIPE_KEYS)} "
                              "as strings (null: not read)")
        commit = item.get("commit")
        out.append(RosterRecipe(values, commit if isinstance(commit, str) else None))
        if item.get("newest") is True:
            newest.append(index)
    if len(newest) > 1:
        raise RosterError("meshcert.recipes marks more than one recipe newest")
    return tuple(out), (newest[0] if newest else None)


@cache
def bundled_roster() -> SplitRoster:
    """The roster shipped with meshcert (package data)."""
    raw = resources.files("meshcert.certify").joinpath("data", ROSTER_RESOURCE).read_text("utf-8")
    return roster_from_json(json.loads(raw))
