"""The source identity `package write` records (`--source-repo`, `--source-revision`,
`--source-file`), asked of the Hub before a byte is written and refused when the Hub says it
is false (meshcert.core.hub.provenance):

- before writing (one request): the revision is in the repo, the recorded file is at it, its
  size is the source's; a difference is a `Refused` naming it (exit 2, nothing written);
- after the source is streamed (its SHA-256 is known only then, a local source is not read
  twice): the Hub's LFS SHA-256 of that file equals the source's, else the write is aborted
  before the manifest (`Aborted`, code `source_identity_mismatch`).

A Hub SOURCE read at its resolved commit is its own proof (every byte was checked against the
listing's LFS SHA-256 while streaming): no request. No check possible (offline, the Hub
unreachable, no token for a private repo, a moving revision) leaves the identity `unverified`,
which the model card and the report say ("claimed, not verified").
"""

from __future__ import annotations

from dataclasses import replace

from meshcert.core.errors import Refused
from meshcert.core.hub.provenance import ClaimedFile, SourceCheck, SourceClaim
from meshcert.writer.errors import Aborted
from meshcert.writer.manifest import Identity
from meshcert.writer.source import SourceModel

MISMATCH = "source_identity_mismatch"


def recorded_file(identity: Identity, source: SourceModel) -> str:
    """The primary file's path as the manifest will record it."""
    if identity.source_file:
        return identity.source_file
    return source.primary.location if source.kind == "hub" else source.primary.name


def check_before_writing(identity: Identity, source: SourceModel) -> SourceCheck | None:
    """The recorded identity against the Hub (None: no source repo recorded); Refused when
    the Hub says it is false."""
    if not identity.repo:
        return None
    path = recorded_file(identity, source)
    primary = source.primary
    if (source.kind == "hub" and identity.repo == source.repo
            and identity.revision == source.revision and path == primary.location
            and primary.attested_sha256):
        claim = SourceClaim(identity.repo, identity.revision,
                            (ClaimedFile(path, primary.attested_sha256, primary.size),))
        return SourceCheck("verified", claim, (), source.revision)
    from meshcert.certify.provenance import ask_hub

    check = ask_hub(SourceClaim(identity.repo, identity.revision,
                                (ClaimedFile(path, None, primary.size),)))
    if check.outcome == "mismatch":
        raise Refused(f"the source identity given is not what the Hub holds: "
                      f"{'; '.join(check.details)}. Nothing is written: give the repo, the "
                      "40-hex commit and the file the source GGUF was downloaded from",
                      code=MISMATCH)
    return check


def check_after_streaming(check: SourceCheck | None, sha256: str) -> SourceCheck | None:
    """The pre-write check completed with the source's SHA-256, now known; Aborted (no
    manifest) when the Hub's LFS SHA-256 of the recorded file differs."""
    if check is None or check.outcome != "verified" or not check.claim.files:
        return check
    wanted = check.claim.files[0]
    if wanted.sha256 is not None:
        return check  # a Hub source: checked while streaming
    claim = replace(check.claim, files=(replace(wanted, sha256=sha256),))
    remote = check.found.get(wanted.path)
    if remote is None or remote.lfs_sha256 is None:
        return SourceCheck("unverified", claim, (
            f"{wanted.path} is not an LFS file, so the Hub lists no SHA-256 for it",),
            check.commit, check.found)
    if remote.lfs_sha256 != sha256:
        raise Aborted(MISMATCH, f"the source streamed has SHA-256 {sha256}, but "
                      f"{check.claim.where} holds {remote.path} with SHA-256 "
                      f"{remote.lfs_sha256}: the source given is not the file the identity "
                      "names; the write is aborted (no manifest)")
    return SourceCheck("verified", claim, (), check.commit, check.found)
