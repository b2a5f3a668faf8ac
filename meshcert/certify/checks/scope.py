"""A slice run (--layers / --stage): the requested range must exist in the package."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import asked_for, register
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding


@register("scope", order=25, codes=["invalid_scope"], runs_when=[
    asked_for("--layers A..B or --stage I/N", lambda view: view.options.scope is not None)])
def scope(view: PackageView) -> Iterator[Finding]:
    selection = view.selection()
    if selection.problem is not None:
        yield finding("invalid_scope", f"{selection.problem}; no artifact was verified",
                      path=MANIFEST_NAME)
