"""The report's `mesh_llm` section: the oldest release that loads the manifest (§4) and whether
the carrier's architecture is on the split-serving roster (§3.4). Pure, over the view."""

from __future__ import annotations

from meshcert.certify.mesh_llm_versions import minimum_mesh_llm, version_needs
from meshcert.certify.report import MeshLlmSupport
from meshcert.certify.split_roster import bundled_roster
from meshcert.certify.view import PackageView
from meshcert.core.gguf.model import GGUFHeader


def carrier_architecture(view: PackageView) -> str | None:
    """general.architecture of the v2 carrier, when its header was read."""
    carrier = view.carrier_entry()
    header = view.headers.get(carrier.path) if carrier is not None and isinstance(
        carrier.path, str) else None
    return header.architecture if isinstance(header, GGUFHeader) else None


def mesh_llm_support(view: PackageView) -> MeshLlmSupport | None:
    if view.package_format != "v2":
        return None
    minimum = minimum_mesh_llm(view.manifest)
    roster = bundled_roster()
    arch = carrier_architecture(view)
    return MeshLlmSupport(
        minimum_version=minimum.version if minimum else None,
        minimum_reasons=[f"{n.reason} >= {n.version}" for n in version_needs(view.manifest)],
        required_by_option=view.options.min_mesh_llm,
        architecture=arch,
        split_certified=roster.certifies(arch) if arch is not None else None,
        roster_recipe=roster.recipe.known, roster_recipe_used=roster.recipe.label,
        roster_retrieved=roster.retrieved,
        roster_partial=roster.partial)
