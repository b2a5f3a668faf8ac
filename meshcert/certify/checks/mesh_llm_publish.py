"""Whether mesh-llm's HF publication job would publish this package (mesh-llm-0.79.md §6.1).

The job is stricter than the format (a 40-character lower-case source revision, the source
repo and revision present, artifacts of non-zero size at unique paths that are neither
model-package.json nor README.md, a manifest of at most 8 MiB), so a package that certifies can
still be refused by it: `mesh_llm_publish_would_refuse`, a warning per broken rule. The rules
live in `meshcert.certify.formats.hf_publication`, shared with the writer's and the publisher's
refusal before work.
"""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.formats.hf_publication import publication_refusals
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

PUBLISH_WOULD_REFUSE = "mesh_llm_publish_would_refuse"


@register("mesh_llm_publish_gate", order=902, formats=("v2",), codes=[PUBLISH_WOULD_REFUSE])
def check_mesh_llm_publish_gate(view: PackageView) -> Iterator[Finding]:
    if view.manifest is None:
        return
    size = len(view.manifest_raw) if view.manifest_raw is not None else None
    for refusal in publication_refusals(view.manifest, manifest_bytes=size):
        yield finding(PUBLISH_WOULD_REFUSE, f"mesh-llm's HF publication job would refuse "
                      f"this package: {refusal.message}", path="model-package.json")
