"""--stages N: the package tool's N-stage plan exists only when N <= layer_count."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import asked_for, register
from meshcert.certify.manifest_model import is_int, layer_count
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.stages import stage_count_exceeds
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding


@register("stage_plan", order=26, codes=["stage_count_exceeds_layer_count"], runs_when=[
    asked_for("--stages N", lambda view: view.options.stages is not None)])
def stage_plan(view: PackageView) -> Iterator[Finding]:
    """mesh-llm's preflight name; the report then shows no plan, never a smaller one."""
    wanted = view.options.stages
    total = layer_count(view.manifest) if view.manifest is not None else None
    if wanted is not None and is_int(total) and total > 0 and stage_count_exceeds(total, wanted):
        yield finding("stage_count_exceeds_layer_count", f"--stages {wanted} exceeds the "
                      f"package's layer_count {total}: a stage holds at least one layer",
                      path=MANIFEST_NAME)
