"""`--attest-key` when publishing: once the published commit certified passed, commit its
signed attestation as `attestations/meshcert.intoto.jsonl` on top (docs/attestation.md).

The signing itself is the caller's (`SignPublished`, meshcert.attest): this layer only commits
the bytes it is handed, so no key ever reaches it. The new commit changes no artifact, so the
attestation's subjects still match its listing; a catalog entry pins that later commit, where
`attest verify` and `catalog certify --trust` find the file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from meshcert.core.hub.errors import HubError
from meshcert.publish.requests import Progress, PublishResult, SignPublished

if TYPE_CHECKING:
    from meshcert.publish.hub_writer import HubWriter

ATTESTATION_PATH = "attestations/meshcert.intoto.jsonl"


def commit_attestation(sign: SignPublished, hub: HubWriter, result: PublishResult,
                       revision: str, say: Progress) -> bool:
    """Sign the published certification and commit it; False (and the result incomplete)
    when the commit could not be made."""
    report = result.remote_report
    assert report is not None and result.commit is not None
    signed = sign(report)
    if isinstance(signed, str):
        result.attestation_note = f"no attestation made: {signed}"
        say(result.attestation_note)
        return True
    say(f"committing {ATTESTATION_PATH} (signed certification of {result.commit[:12]})")
    try:
        done = hub.retry(f"attestation {result.target}", lambda: hub.commit(
            result.target, additions=[(ATTESTATION_PATH, signed)],
            message=f"Signed certification of {result.commit[:12] if result.commit else ''}",
            description=f"in-toto/SLSA VSA attestation that hf://{result.target}@"
            f"{result.commit} certified passed (meshcert).", revision=revision))
    except HubError as exc:
        result.status = "incomplete"
        result.message = f"{result.message}; attestation not committed: {exc.message}"
        return False
    result.attestation_commit = done.oid
    result.commits.append(done.oid)
    result.message = f"published, certified and signed: {result.ref}"
    return True
