"""Is a claimed source identity true? `repo@revision` holds `path` whose LFS SHA-256 is the
claimed digest: one Hub request (`model_info(files_metadata=True)` at that revision: the
commit and every file's LFS SHA-256 in one listing), through the one door (`HubApi.resolve`).

Three outcomes, never more said than was asked:
- `verified`: the revision exists, every claimed file is at it, each claimed SHA-256 (and size)
  equals the Hub's LFS record;
- `mismatch`: the Hub answered, and what it holds differs (the revision is not in the repo,
  a file is not at that revision, another SHA-256 or size): each difference named;
- `unverified`: no check was possible (offline, the Hub unreachable, no token for a repo that
  may be private or gated, a moving revision such as `main`, a file the Hub keeps outside LFS
  so lists no SHA-256): the claim stands as claimed, and the reason is said.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Literal

from meshcert.core.hub.listing import RemoteFile

if TYPE_CHECKING:
    from meshcert.core.hub.api import HubApi

Outcome = Literal["verified", "mismatch", "unverified"]
_COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")
# Hub answers that say the claim is false, whoever asks (a repo the caller can see, without
# that revision)
_DEFINITE = frozenset({"hub_revision_not_found"})


@dataclass(frozen=True)
class ClaimedFile:
    path: str  # as the manifest records it (a repo path, or only the file name)
    sha256: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class SourceClaim:
    """What a package (or a write) says it was made from."""

    repo: str
    revision: str | None
    files: tuple[ClaimedFile, ...] = ()

    @property
    def where(self) -> str:
        return f"{self.repo}@{self.revision}" if self.revision else self.repo

    @property
    def pinned(self) -> bool:
        return self.revision is not None and _COMMIT.match(self.revision) is not None


@dataclass(frozen=True)
class SourceCheck:
    outcome: Outcome
    claim: SourceClaim
    details: tuple[str, ...] = ()  # what differs (mismatch) or why no check was possible
    commit: str | None = None  # the commit the Hub resolved the revision to
    # the Hub's record of each claimed file (claimed path -> listing entry), when found
    found: Mapping[str, RemoteFile] = field(default_factory=dict)

    @property
    def detail(self) -> str | None:
        """The commit checked (verified), else what differs or why no check was possible."""
        if self.outcome == "verified":
            return self.commit
        return "; ".join(self.details) or None

    @property
    def summary(self) -> str:
        head = {"verified": f"verified against the Hub: {self.claim.where} holds "
                f"{_names(self.claim)} with the claimed SHA-256",
                "mismatch": f"does not match the Hub: {self.claim.where}",
                "unverified": f"claimed, not verified: {self.claim.where}"}[self.outcome]
        return head + (f" ({'; '.join(self.details)})" if self.details else "")


def _names(claim: SourceClaim) -> str:
    return ", ".join(f.path for f in claim.files) or "the source"


def offline() -> bool:
    """HF_HUB_OFFLINE (as huggingface_hub reads it): no request may be made."""
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def precheck(claim: SourceClaim) -> SourceCheck | None:
    """The unverified outcome that needs no request (offline, a moving revision), else None."""
    if offline():
        return SourceCheck("unverified", claim, ("HF_HUB_OFFLINE is set: the Hub was not "
                                                 "asked",))
    if claim.revision is None:
        return SourceCheck("unverified", claim, ("no source revision is recorded: the claim "
                                                 "names no commit to check",))
    if not claim.pinned:
        return SourceCheck("unverified", claim, (
            f"revision {claim.revision!r} is not a 40-hex commit: a moving name proves "
            "nothing about what the package was made from",))
    return None


def check_claim(api: HubApi, claim: SourceClaim) -> SourceCheck:
    """The claim against the Hub's listing at its revision (at most one request, none when
    `precheck` already answers). A repo the Hub says it does not have leaves the claim
    unverified, with or without a token: it may be private to someone else."""
    from meshcert.core.hub.errors import HubError  # httpx: only when a request is made

    early = precheck(claim)
    if early is not None:
        return early
    try:
        resolved = api.resolve(claim.repo, claim.revision, listing=True)
        files = resolved.files if resolved.files is not None else api.tree(
            claim.repo, resolved.commit)
    except HubError as err:
        if err.code in _DEFINITE:
            return SourceCheck("mismatch", claim, (f"revision {claim.revision} is not in "
                                                   f"{claim.repo}",))
        return SourceCheck("unverified", claim, (f"the Hub could not be asked: {err.message}",))
    return compare(claim, files, resolved.commit)


def _find(path: str, listing: Mapping[str, RemoteFile]) -> RemoteFile | None:
    """The listing entry for a claimed path: the same path, else, for a bare file name (a
    local write records only the file's name), the one file of that name."""
    if path in listing or "/" in path:
        return listing.get(path)
    name = PurePosixPath(path).name
    same = [f for p, f in listing.items() if PurePosixPath(p).name == name]
    return same[0] if len(same) == 1 else None


def compare(claim: SourceClaim, files: list[RemoteFile], commit: str) -> SourceCheck:
    """Pure: each claimed file against the listing at `commit`."""
    listing = {f.path: f for f in files}
    differs: list[str] = []
    unknown: list[str] = []
    found: dict[str, RemoteFile] = {}
    if claim.revision is not None and commit.lower() != claim.revision.lower():
        differs.append(f"revision {claim.revision} resolves to commit {commit}")
    for want in claim.files:
        remote = _find(want.path, listing)
        if remote is None:
            differs.append(f"{want.path} is not in {claim.repo} at {commit}")
            continue
        found[want.path] = remote
        if want.sha256 is not None and remote.lfs_sha256 is None:
            unknown.append(f"{remote.path} is not an LFS file, so the Hub lists no SHA-256 "
                           "for it")
        elif want.sha256 is not None and remote.lfs_sha256 != want.sha256.lower():
            differs.append(f"{remote.path} has SHA-256 {remote.lfs_sha256} on the Hub, the "
                           f"package claims {want.sha256}")
        size = remote.lfs_size if remote.lfs_size is not None else remote.size
        if want.size is not None and size is not None and size != want.size:
            differs.append(f"{remote.path} is {size:,} bytes on the Hub, the package claims "
                           f"{want.size:,}")
    if differs:
        return SourceCheck("mismatch", claim, tuple(differs), commit, found)
    if unknown:
        return SourceCheck("unverified", claim, tuple(unknown), commit, found)
    return SourceCheck("verified", claim, (), commit, found)
