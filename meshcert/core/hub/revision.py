"""Is the requested revision pinned (an immutable commit) or a moving target? (pure)"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

_HEX = re.compile(r"^[0-9a-fA-F]+$")
_SHORT_SHA_MIN = 4


@dataclass(frozen=True)
class RepoRefs:
    branches: frozenset[str] = frozenset()
    tags: frozenset[str] = frozenset()
    converts: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RevisionClass:
    pinned: bool
    kind: str  # commit | none | branch | tag | pull_request | convert | short_sha | other
    reason: str


def _named(revision: str, names: Collection[str], prefix: str) -> bool:
    return revision in names or (revision.startswith(prefix) and revision[len(prefix):] in names)


def classify_revision(requested: str | None, resolved: str, refs: RepoRefs) -> RevisionClass:
    """Only a full 40-hex SHA equal to the resolved commit, and naming no branch or tag, is
    pinned; everything else can move (tags too: the Hub lets them be moved)."""
    if requested is None:
        return RevisionClass(False, "none", "no revision was given, so the default branch is "
                             "certified; it moves with every push")
    if _named(requested, refs.branches, "refs/heads/"):
        return RevisionClass(False, "branch", f"{requested!r} is a branch; it moves with every "
                             "push")
    if _named(requested, refs.tags, "refs/tags/"):
        return RevisionClass(False, "tag", f"{requested!r} is a tag; tags can be moved on the "
                             "Hub")
    if requested.startswith("refs/pr/"):
        return RevisionClass(False, "pull_request", f"{requested!r} is a pull-request ref; it "
                             "moves with every push to the pull request")
    if requested.startswith("refs/convert/") or requested in refs.converts:
        return RevisionClass(False, "convert", f"{requested!r} is a conversion ref; the Hub "
                             "rewrites it")
    if _HEX.match(requested) and len(requested) == 40:
        if requested.lower() == resolved.lower():
            return RevisionClass(True, "commit", f"pinned to commit {resolved}")
        return RevisionClass(False, "other", f"{requested!r} resolved to a different commit "
                             f"({resolved}); it is not an immutable commit id")
    if _HEX.match(requested) and len(requested) >= _SHORT_SHA_MIN \
            and resolved.lower().startswith(requested.lower()):
        return RevisionClass(False, "short_sha", f"{requested!r} is an abbreviated commit id; "
                             "it could become ambiguous")
    return RevisionClass(False, "other", f"{requested!r} is not a full commit id")
