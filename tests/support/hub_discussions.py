"""The fake Hub's discussion comments and pull-request details, as HfApi calls them:

- `POST /api/{type}s/{id}/discussions/{num}/comment` `{"comment": markdown}` ->
  `{"newMessage": event}` (comment_discussion; any token);
- `POST .../discussions/{num}/comment/{comment_id}/edit` `{"content": ...}` ->
  `{"updatedComment": event}` (edit_discussion_comment; its author only, else 403);
- `GET .../discussions/{num}` (get_discussion_details): the discussion with its `events`
  (comments: `{id, type: "comment", author{name, _id}, createdAt, data{edited, hidden,
  latest{raw}}}`), and for a pull request `changes{base, mergeCommitId}`,
  `filesWithConflicts` and a unified `diff` of the pull request's head against its base;
- `GET /api/organizations/{org}/members` (list_organization_members): the users the token table
  puts in the org, each with its `role`.

Posting a comment fires a `discussion.comment` webhook (hub_webhooks.py).
"""

from __future__ import annotations

import difflib
import secrets
import time
from typing import TYPE_CHECKING, Any

from tests.support.hub_http import Answer, Request, error, iso_time, json_answer
from tests.support.hub_repo import Discussion, FakeRepo
from tests.support.hub_webhooks import object_id

if TYPE_CHECKING:
    from tests.support.hub_server import FakeHub


def comment_event(c: dict[str, Any]) -> dict[str, Any]:
    return {"id": c["id"], "type": "comment", "createdAt": iso_time(c["created_at"]),
            "author": {"name": c["author"], "_id": object_id(c["author"])},
            "data": {"edited": c["edited"], "hidden": False, "latest": {"raw": c["content"]},
                     "numEdits": c["edits"]}}


def find(repo: FakeRepo, num: str) -> Discussion | None:
    return next((d for d in repo.discussions if str(d.num) == num), None)


def post_comment(hub: FakeHub, req: Request, repo: FakeRepo, num: str) -> Answer:
    if req.token is None:
        return error(401, None, "You must be authenticated to access this resource")
    body = req.json()
    text = body.get("comment") if isinstance(body, dict) else None
    if not isinstance(text, str) or not text.strip():
        return error(400, None, "comment is required")
    with hub.lock:
        found = find(repo, num)
        if found is None:
            return error(404, None, f"Discussion #{num} not found")
        comment = {"id": secrets.token_hex(12), "author": req.token.user, "content": text,
                   "edited": False, "edits": 0, "created_at": time.time()}
        found.comments.append(comment)
    hub.webhooks.comment_event(repo, found, comment)
    return json_answer({"newMessage": comment_event(comment)})


def edit_comment(hub: FakeHub, req: Request, repo: FakeRepo, num: str, cid: str) -> Answer:
    if req.token is None:
        return error(401, None, "You must be authenticated to access this resource")
    body = req.json()
    text = body.get("content") if isinstance(body, dict) else None
    if not isinstance(text, str):
        return error(400, None, "content is required")
    with hub.lock:
        found = find(repo, num)
        comment = next((c for c in found.comments if c["id"] == cid), None) if found else None
        if comment is None:
            return error(404, None, f"comment {cid} not found in #{num}")
        if comment["author"] != req.token.user:
            return error(403, None, "You can only edit your own comments")
        comment.update(content=text, edited=True, edits=comment["edits"] + 1)
    return json_answer({"updatedComment": comment_event(comment)})


def unified_diff(hub: FakeHub, repo: FakeRepo, base: str | None, head: str | None) -> str:
    """`diff --git` sections for every file that differs between two commits."""
    if base is None or head is None:
        return ""
    old, new = repo.commits[base].files, repo.commits[head].files
    out: list[str] = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a is not None and b is not None and a.blob_id == b.blob_id:
            continue

        def text(stored: Any) -> list[str]:
            if stored is None or stored.lfs_sha256:
                return []
            return hub.blobs[stored.key].decode("utf-8", "replace").splitlines(keepends=True)

        out.append(f"diff --git a/{path} b/{path}\n")
        out += difflib.unified_diff(text(a), text(b), f"a/{path}" if a else "/dev/null",
                                    f"b/{path}" if b else "/dev/null")
    return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def details(hub: FakeHub, repo: FakeRepo, num: str) -> Answer:
    with hub.lock:
        found = find(repo, num)
        if found is None:
            return error(404, None, f"Discussion #{num} not found")
        data: dict[str, Any] = {
            "num": found.num, "title": found.title, "author": {"name": found.author},
            "createdAt": iso_time(found.created_at), "status": found.status,
            "repo": {"name": repo.repo_id, "type": repo.repo_type},
            "isPullRequest": found.is_pull_request,
            "events": [comment_event(c) for c in found.comments],
            "filesWithConflicts": [], "diff": ""}
        if found.is_pull_request:
            base = repo.resolve(found.base)
            head = found.merge_commit or repo.pulls.get(found.num)
            data["changes"] = {"base": found.base, "mergeCommitId": found.merge_commit}
            data["diff"] = unified_diff(hub, repo, found.merge_base or base, head)
    return json_answer(data)


def org_members(hub: FakeHub, org: str) -> Answer:
    members = [{"user": t.user, "fullname": t.user, "type": "user", "avatarUrl": "",
                "role": t.orgs[org]} for t in hub.tokens.all() if org in t.orgs]
    unique = {m["user"]: m for m in members}
    return json_answer(list(unique.values()))
