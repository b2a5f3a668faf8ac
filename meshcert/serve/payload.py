"""A Hub webhook delivery's JSON -> the event the service acts on, or why it is ignored.

Lenient by design (shared/spec/hub-webhooks.md): the Hub retries a non-2xx answer and counts it
toward suspending the webhook, so an unknown scope, action or `webhook.version`, or a field
missing, is an `Ignored` (answered 2xx and logged), never an error. Only a body that is not a
JSON object at all is a `PayloadError`. Nothing here is trusted: a payload names a repo and a
ref to look at, and every commit is resolved again through the Hub API (never `headSha`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from meshcert.core.errors import ErrorKind, MeshcertError

KNOWN_VERSION = 3
# a Hub repo id as the Hub spells it (huggingface_hub's validate_repo_id): one slash, no `..`
# or `--`; anything else (`ns/../x`, `ns/a/b`, spaces, new lines) is no repo to act on
REPO_ID = re.compile(r"^(?!.*(--|\.\.))[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?/"
                     r"[A-Za-z0-9](?:[\w.-]{0,94}[A-Za-z0-9])?$", re.ASCII)
REPO_TYPES = frozenset({"model", "dataset"})
# scope -> actions acted upon; "More scopes can be added in the future": an unknown narrower
# scope (repo.content.x) counts as an update of the known one it starts with
SCOPES: dict[str, frozenset[str]] = {
    "repo.content": frozenset({"update"}),
    "discussion": frozenset({"create", "update"}),
    "discussion.comment": frozenset({"create", "update"}),
}


class PayloadError(MeshcertError, ValueError):
    """The body is not a JSON object."""

    kind = ErrorKind.USAGE


@dataclass(frozen=True)
class UpdatedRef:
    ref: str
    new_sha: str | None  # a hint only: never certified as such


@dataclass(frozen=True)
class Event:
    scope: str
    action: str
    repo: str  # ns/name
    repo_type: str  # model | dataset
    refs: tuple[UpdatedRef, ...] = ()
    pr: int | None = None  # the discussion's number when it is a pull request
    pr_status: str | None = None
    comment_id: str | None = None
    comment: str | None = None  # the comment's text (None when hidden)
    head_sha_hint: str | None = None  # repo.headSha: logged, never used


@dataclass(frozen=True)
class Ignored:
    reason: str
    repo: str | None = None
    notes: list[str] = field(default_factory=list)


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_SHA = re.compile(r"^[0-9a-fA-F]{40,64}$")
NOT_A_COMMIT = "(not a commit id)"


def _sha(value: Any) -> str | None:
    """A payload's commit id, as a hint only: None when absent (a deleted ref), a marker when
    it is text that is no commit id (never written raw into a log line)."""
    text = _str(value)
    if text is None:
        return None
    return text.lower() if _SHA.match(text) else NOT_A_COMMIT


def decode(raw: bytes) -> dict[str, Any]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # [[[[... nested deep
        raise PayloadError(f"the body is not JSON: {type(exc).__name__}") from None
    if not isinstance(data, dict):
        raise PayloadError(f"the body is JSON but not an object ({type(data).__name__})")
    return data


def _scope(scope: str) -> str | None:
    """The known scope `scope` is, or narrows (repo.content.lfs -> repo.content)."""
    for known in sorted(SCOPES, key=len, reverse=True):
        if scope == known or scope.startswith(known + "."):
            return known
    return None


def parse(raw: bytes) -> Event | Ignored:
    """PayloadError when `raw` is not a JSON object; otherwise an Event or why not."""
    data = decode(raw)
    event, repo = _dict(data.get("event")), _dict(data.get("repo"))
    version = _dict(data.get("webhook")).get("version")
    scope, action = _str(event.get("scope")), _str(event.get("action"))
    name, kind = _str(repo.get("name")), _str(repo.get("type"))
    if version != KNOWN_VERSION:
        return Ignored(f"webhook version {version!r} is not {KNOWN_VERSION}", name)
    if scope is None or action is None:
        return Ignored("no event.scope or event.action", name)
    known = _scope(scope)
    if known is None:
        return Ignored(f"scope {scope!r} is not acted upon", name)
    if known != scope:
        action = "update"  # a narrower scope counts as an update of the known one
    if action not in SCOPES[known]:
        return Ignored(f"{scope!r} {action!r} is not acted upon", name)
    if name is None or not REPO_ID.match(name) or kind not in REPO_TYPES:
        return Ignored(f"repo {name!r} of type {kind!r} is not a model or dataset repo id")
    refs = tuple(UpdatedRef(str(r["ref"]), _sha(r.get("newSha")))
                 for r in data.get("updatedRefs") or [] if isinstance(r, dict)
                 and isinstance(r.get("ref"), str))
    discussion, comment = _dict(data.get("discussion")), _dict(data.get("comment"))
    num = discussion.get("num")
    is_pr = discussion.get("isPullRequest") is True and isinstance(num, int) and num > 0
    assert kind is not None
    return Event(scope=known, action=action, repo=name, repo_type=kind, refs=refs,
                 pr=num if is_pr else None, pr_status=_str(discussion.get("status")),
                 comment_id=_str(comment.get("id")),
                 comment=None if comment.get("hidden") else _str(comment.get("content")),
                 head_sha_hint=_sha(repo.get("headSha")))
