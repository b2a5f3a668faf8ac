"""Report what parsing model-package.json found (missing, too large, not JSON, duplicate keys)."""

from __future__ import annotations

from collections.abc import Iterator

from meshcert.certify.checks import register
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding


@register("manifest_json", codes=["missing_manifest", "invalid_manifest_json",
                                  "manifest_too_large", "duplicate_manifest_key",
                                  "artifact_not_file"], order=0)
def manifest_json(view: PackageView) -> Iterator[Finding]:
    yield from view.parsed.findings
