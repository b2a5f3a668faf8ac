"""Catalog runs under a trust policy (`catalog certify --trust FILE [--trust-attested]`): the
interface the runner calls, implemented above the engine (meshcert.attest.catalog_trust), so
the engine never depends on how attestations are verified.

`findings` adds the policy's verdict to a full certification; `accept` (with --trust-attested)
may accept a package from a valid, trusted PASSED attestation whose subjects match the commit's
listing, without reading any header (a constant number of requests)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding
from meshcert.core.hub.gate import RequestGate


@dataclass(frozen=True)
class AttestedCheck:
    """What `accept` found: accepted (with the signer and the manifest it read) or not."""

    accepted: bool
    requests: int
    commit: str | None = None
    signer: str | None = None
    manifest_raw: bytes | None = None
    warning_codes: tuple[str, ...] = ()  # the attested certification's warnings


class AttestationPolicy(Protocol):
    def findings(self, view: PackageView) -> list[Finding]:
        """Findings to add to a full certification of `view` (none in mode off)."""

    def signer_of(self, repo: str, commit: str) -> str | None:
        """The trusted signer `findings` found valid for this commit, if any."""

    def accept(self, repo: str, revision: str | None, gate: RequestGate
               ) -> AttestedCheck | None:
        """None: not asked to accept from attestations (no --trust-attested)."""


def manifest_view(raw: bytes) -> PackageView:
    """A view of the manifest alone (no listing, no header), to read the package's facts."""
    from meshcert.certify.manifest_parse import parse_manifest
    from meshcert.certify.report_ref import RefInfo

    return PackageView(ref=RefInfo(kind="hf", pinned=True), display_ref="", local_dir=None,
                       manifest_raw=raw, parsed=parse_manifest(raw))
