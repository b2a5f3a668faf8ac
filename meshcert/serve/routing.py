"""Which tasks an event asks for (pure): only watched package repos and configured catalogs
are acted on, and only the refs and pull requests that can carry a package or an entry.

A task names a repo and a ref (or a pull request), never a commit: the worker resolves the
commit through the Hub when it runs (the payload's `headSha` and `newSha` are hints).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from meshcert.serve.config import ServeConfig
from meshcert.serve.payload import Event, Ignored

MAIN = "refs/heads/main"
RECHECK = re.compile(r"^\s*/meshcert\s+recheck\b", re.IGNORECASE)
_PR_REF = re.compile(r"^refs/pr/(\d+)$")

# task kinds
PACKAGE = "package"  # a package repo's main: certify, sign, upload the attestation
PACKAGE_PR = "package_pr"  # a package repo's pull request: certify its head, comment
CATALOG_PR = "catalog_pr"  # a catalog pull request: certify the entries it changes, comment
RECHECK_KIND = "recheck"  # `/meshcert recheck`: the PR's task again, if the author may write


@dataclass(frozen=True)
class TaskSpec:
    kind: str
    repo: str
    repo_type: str
    ref: str  # refs/heads/main or refs/pr/N: a newer task on it supersedes a pending one
    pr: int | None = None
    comment_id: str | None = None  # recheck: the comment that asked
    hint: str | None = None  # the payload's commit, logged beside the one resolved


def pr_of(ref: str) -> int | None:
    match = _PR_REF.match(ref)
    return int(match.group(1)) if match else None


def tasks_for(event: Event, config: ServeConfig) -> list[TaskSpec] | Ignored:
    is_catalog = event.repo_type == "dataset" and config.is_catalog(event.repo)
    is_package = event.repo_type == "model" and config.watches(event.repo)
    if not (is_catalog or is_package):
        return Ignored(f"{event.repo_type} repo {event.repo} is not watched", event.repo)
    pr_kind = CATALOG_PR if is_catalog else PACKAGE_PR
    if event.scope == "repo.content":
        out: list[TaskSpec] = []
        for ref in event.refs:
            if ref.new_sha is None:
                continue  # a deleted ref: nothing to certify
            num = pr_of(ref.ref)
            if num is not None:
                out.append(TaskSpec(pr_kind, event.repo, event.repo_type, ref.ref, num,
                                    hint=ref.new_sha))
            elif ref.ref == MAIN and is_package:
                out.append(TaskSpec(PACKAGE, event.repo, event.repo_type, MAIN,
                                    hint=ref.new_sha or event.head_sha_hint))
        return out or Ignored(f"no ref of {event.repo} to certify was updated", event.repo)
    if event.pr is None:
        return Ignored(f"{event.scope} {event.action} on {event.repo}: not a pull request",
                       event.repo)
    pr_ref = f"refs/pr/{event.pr}"
    if event.scope == "discussion":
        if event.pr_status not in (None, "open", "draft", "merged"):
            return Ignored(f"pull request #{event.pr} of {event.repo} is {event.pr_status!r}",
                           event.repo)
        return [TaskSpec(pr_kind, event.repo, event.repo_type, pr_ref, event.pr)]
    if event.comment is None or not RECHECK.match(event.comment):
        return Ignored(f"comment on #{event.pr} of {event.repo} asks nothing", event.repo)
    return [TaskSpec(RECHECK_KIND, event.repo, event.repo_type, pr_ref, event.pr,
                     comment_id=event.comment_id)]
