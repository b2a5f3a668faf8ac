"""The recorded source identity, as the Hub answered it (meshcert.certify.provenance asked):
`source_identity_mismatch` (error) when repo@revision does not hold the recorded file with the
recorded SHA-256; `source_identity_unverified` when no check was possible (a warning; a
note when the revision is a moving name, which no check could pin). Pure, over the view."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import applicable, asked_for, register
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

ASKED_BY = "models certify or catalog certify (the library: CertOptions.source_identity)"


@register("source_identity", order=365,
          codes=["source_identity_mismatch", "source_identity_unverified"],
          runs_when=(asked_for(ASKED_BY, lambda view: view.options.source_identity),
                     applicable(lambda view: view.source_check is not None,
                                        "the manifest records no source repo")))
def source_identity(view: PackageView) -> Iterator[Finding]:
    check = view.source_check
    if check is None or check.outcome == "verified":
        return
    if check.outcome == "mismatch":
        yield finding("source_identity_mismatch", f"source_model {check.summary}",
                      path="source_model")
        return
    moving = check.claim.revision is not None and not check.claim.pinned
    yield finding("source_identity_unverified", f"source_model: {check.summary}",
                  path="source_model", severity="info" if moving else None)
