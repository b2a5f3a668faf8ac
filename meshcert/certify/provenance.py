"""The source identity a package records (`source_model.repo`, `.revision`, its files and
their SHA-256), checked against the Hub: one request a package, only when a repo and a
40-hex revision are recorded (meshcert.core.hub.provenance says what each outcome means).
The outcome lands on the view (`view.source_check`); the `source_identity` check turns it
into findings and the report's `source_model.identity`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from meshcert.core.hub.provenance import ClaimedFile, SourceCheck, SourceClaim

if TYPE_CHECKING:
    from meshcert.certify.view import PackageView
    from meshcert.core.hub.gate import RequestGate


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _files(source: dict[str, Any]) -> tuple[ClaimedFile, ...]:
    """Every recorded source file with its SHA-256 and size (v2 `byte_size`, v1
    `size_bytes`); without a files list, the primary file and `source_model.sha256`."""
    listed = source.get("files")
    out: list[ClaimedFile] = []
    if isinstance(listed, list):
        for item in listed:
            path = _text(item.get("path")) if isinstance(item, dict) else None
            if path is not None and isinstance(item, dict):
                size = _int(item.get("byte_size", item.get("size_bytes")))
                out.append(ClaimedFile(path, _text(item.get("sha256")), size))
    primary = _text(source.get("primary_file"))
    if out and primary is not None and out[0].path != primary and all(
            f.path != primary for f in out):
        out.insert(0, ClaimedFile(primary, _text(source.get("sha256"))))
    if not out and primary is not None:
        out.append(ClaimedFile(primary, _text(source.get("sha256"))))
    return tuple(out)


def claim_from_manifest(manifest: dict[str, Any] | None) -> SourceClaim | None:
    """The source identity a manifest records, or None when it records no source repo."""
    source = (manifest or {}).get("source_model")
    if not isinstance(source, dict):
        return None
    repo = _text(source.get("repo"))
    if repo is None:
        return None
    return SourceClaim(repo, _text(source.get("revision")), _files(source))


def check_recorded_source(view: PackageView, gate: RequestGate | None = None) -> None:
    """Ask the Hub about the view's recorded source (at most one request, one attempt: an
    unanswered question leaves the claim unverified, it never fails the package); the
    request is counted in the view's transfer."""
    claim = claim_from_manifest(view.manifest)
    if claim is None:
        return
    from meshcert.core.hub.provenance import precheck

    early = precheck(claim)
    if early is not None:
        view.source_check = early
        return
    view.source_check = ask_hub(claim, gate, view.transfer)


def ask_hub(claim: SourceClaim, gate: RequestGate | None = None,
            transfer: dict[str, int] | None = None) -> SourceCheck:
    """`claim` against the Hub of HF_ENDPOINT, with one attempt and the caller's gate."""
    from meshcert.core.hub.api import HubApi
    from meshcert.core.hub.provenance import check_claim
    from meshcert.core.hub.settings import HubSettings

    settings = replace(HubSettings.from_env(), max_retries=0)
    api = HubApi(settings, gate=gate)
    try:
        return check_claim(api, claim)
    finally:
        if transfer is not None and transfer:
            transfer["requests"] = transfer.get("requests", 0) + api.counter.requests
