"""Which mesh-llm can load the package (mesh-llm-0.79.md §4) and serve it split (§3.4).

`mesh_llm_minimum_version` (info) names the oldest release that accepts the manifest; with
`--min-mesh-llm X.Y.Z` (a catalog that still serves older nodes) a package that needs a newer
release is `mesh_llm_version_too_old` (error). `architecture_not_split_certified` (warning):
the carrier's general.architecture is not on the roster meshcert ships, so `mesh-llm serve
--split` refuses it without `--allow-uncertified-split` (certify itself never consults it).
"""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.mesh_llm_versions import is_older, minimum_mesh_llm, parse_version
from meshcert.certify.split_roster import bundled_roster
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

MINIMUM_VERSION = "mesh_llm_minimum_version"
VERSION_TOO_OLD = "mesh_llm_version_too_old"
NOT_SPLIT_CERTIFIED = "architecture_not_split_certified"


@register("mesh_llm_version", order=900, formats=("v2",),
          codes=[MINIMUM_VERSION, VERSION_TOO_OLD])
def check_mesh_llm_version(view: PackageView) -> Iterator[Finding]:
    need = minimum_mesh_llm(view.manifest)
    if need is None:
        return
    floor = view.options.min_mesh_llm
    if floor is not None and parse_version(floor) is not None and is_older(floor, need.version):
        yield finding(VERSION_TOO_OLD, f"the package needs mesh-llm >= {need.version} "
                      f"({need.reason}); mesh-llm {floor} (--min-mesh-llm) refuses the "
                      "manifest at parse time", path="model-package.json")
        return
    yield finding(MINIMUM_VERSION, f"oldest mesh-llm that loads this manifest: {need.version} "
                  f"({need.reason})", path="model-package.json")


@register("split_roster", order=901, formats=("v2",), codes=[NOT_SPLIT_CERTIFIED])
def check_split_roster(view: PackageView) -> Iterator[Finding]:
    from meshcert.certify.mesh_llm_support import carrier_architecture

    arch = carrier_architecture(view)
    if arch is None:
        return
    roster = bundled_roster()
    if roster.certifies(arch):
        return
    known = (f"as meshcert knows it, recipe {roster.recipe.label}"
             + (" (a partial list)" if roster.partial else
                f" (retrieved {roster.retrieved or 'at an unknown date'})"))
    carrier = view.carrier_entry()
    yield finding(NOT_SPLIT_CERTIFIED, f"general.architecture {arch!r} is not on mesh-llm's "
                  f"split-serving roster (split-certified.json) {known}: `mesh-llm serve "
                  "--split` refuses it unless --allow-uncertified-split is given",
                  path=carrier.path if carrier is not None else None)
