"""`package write --publish`: mesh-llm's HF publication gate (mesh-llm-0.79.md §6.1) applied to
the planned package before a byte is written or uploaded. The rules are the certifier's
(`meshcert.certify.formats.hf_publication`); this module only says what the plan already knows
(the recorded source repo and revision, the artifacts' paths and sizes) and refuses with them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from meshcert.certify.formats.hf_publication import publication_refusals
from meshcert.core.errors import Refused

if TYPE_CHECKING:
    from meshcert.writer.write import Prepared

REFUSAL_CODE = "mesh_llm_publish_would_refuse"


def planned_manifest(prepared: Prepared) -> dict[str, Any]:
    """The part of the v2 manifest the plan fixes before writing (no digests yet)."""
    identity, plan = prepared.identity, prepared.plan
    source: dict[str, Any] = {
        "primary_file": identity.source_file or Path(plan.source.primary.name).name}
    if identity.repo:
        source["repo"] = identity.repo
    if identity.revision:
        source["revision"] = identity.revision
    entries = [{"id": a.artifact_id, "path": a.path, "byte_size": a.size}
               for a in plan.all_artifacts()]
    return {"schema_version": 2, "source_model": source,
            "artifact_catalog": {"entries": entries}}


def refuse_unpublishable(prepared: Prepared) -> None:
    """Raise Refused (exit 2, nothing written) when mesh-llm's HF job would refuse the package.
    A v1 package is never published by that job: no gate."""
    if prepared.request.fmt != "v2":
        return
    source = prepared.plan.source
    hub = source.kind == "hub"
    refusals = publication_refusals(planned_manifest(prepared),
                                    resolved_repo=source.repo if hub else None,
                                    resolved_revision=source.revision if hub else None)
    if refusals:
        raise Refused("mesh-llm's HF publication job would refuse this package, "
                      "so nothing is written or uploaded: "
                      + "; ".join(r.message for r in refusals), code=REFUSAL_CODE)
