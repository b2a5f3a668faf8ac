"""A catalog pull request -> the package references it adds or changes (pure, given the entry
files' bytes at the pull request's head and at its base).

The diff (get_discussion_details) names the files the pull request touches; only `entries/`
JSON files count. A reference is "changed" when the base version of its entry holds no
reference with the same (variant, repo, revision); each is certified at the revision it pins,
or reported as pinning none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from meshcert.catalog.entries import PackageReference, parse_entry
from meshcert.catalog.sources import entry_path_problem

_DIFF_FILE = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)
_PLUS_FILE = re.compile(r"^\+\+\+ b/(\S+)$", re.MULTILINE)


def touched_entries(diff: str | None) -> list[str]:
    """The entries/*.json files a pull request's diff touches (in order, once each)."""
    if not diff:
        return []
    paths = [m.group(2) for m in _DIFF_FILE.finditer(diff)]
    paths += [m.group(1) for m in _PLUS_FILE.finditer(diff)]
    return [p for p in dict.fromkeys(paths)
            if p.endswith(".json") and entry_path_problem(p) is None]


@dataclass(frozen=True)
class Change:
    entry: str
    reference: PackageReference | None  # None: the entry itself could not be read
    problem: str | None = None  # why nothing is certified (no pin, unreadable entry)


def _key(ref: PackageReference) -> tuple[str, str, str | None]:
    return ref.variant, ref.repo.lower(), ref.pinned_commit or ref.revision


def changes(entry: str, head: bytes | None, base: bytes | None) -> list[Change]:
    """What `entry` adds or changes between base and head (head None: the PR deletes it)."""
    if head is None:
        return []
    parsed = parse_entry(entry, head)
    if not parsed.readable:
        why = "; ".join(f.message for f in parsed.findings) or "unreadable"
        return [Change(entry, None, why)]
    before = {_key(r) for r in parse_entry(entry, base).references} if base else set()
    out: list[Change] = []
    for ref in parsed.references:
        if _key(ref) in before:
            continue
        problem = None if ref.pinned_commit else (
            f"pins no revision ({ref.revision!r})" if ref.revision else "pins no revision")
        out.append(Change(entry, ref, problem))
    return out
