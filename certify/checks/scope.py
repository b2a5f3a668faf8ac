"""A slice run (--layers / --stage): the requested range must exist in the package."""

from __future__ import annotations

from collections.abc import Iterator

from certify.checks import register
from certify.findings import Finding, finding
from certify.manifest_parse import MANIFEST_NAME
from certify.view import PackageView


@register("scope", order=25, codes=["invalid_scope"])
def scope(view: PackageView) -> Iterator[Finding]:
    selection = view.selection()
    if selection.problem is not None:
        yield finding("invalid_scope", f"{selection.problem}; no artifact was verified",
                      path=MANIFEST_NAME)
