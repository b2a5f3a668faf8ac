"""The fake Hub's write side, answering what huggingface_hub 2.4's HfApi sends:

- `GET /api/whoami-v2`; `POST /api/repos/create` (private, 409 when it exists, which
  `exist_ok=True` swallows); a new repo gets the Hub's initial commit (`.gitattributes`);
- `POST /api/{models|datasets}/{id}/preupload/{rev}`: lfs or regular per file (the repo's
  `.gitattributes` LFS patterns, over 10 MiB, or binary), with the oid already there;
- the LFS batch API, `POST /{id}.git/info/lfs/objects/batch`, basic transfer only: an object
  already stored gets no actions (the client skips it), a missing one an upload href on the
  storage origin (`PUT /lfs-upload/<key>`, checked against its sha256 and size) and a verify
  href; multipart is not offered;
- `POST /api/.../commit/{rev}`: NDJSON (header, file, lfsFile, deletedFile, deletedFolder),
  atomic: refused whole when an LFS object is missing, a deleted file does not exist, or the
  header's parentCommit is not the head any more (412); `create_pr=1` opens `refs/pr/<n>` and a
  pull request; a commit to `refs/pr/<n>` moves that pull request; only branches and pull
  requests take commits;
- `POST /api/.../branch/{name}`, `GET /api/.../auth-check[/write]`, discussions (create, list,
  details), `POST /api/validate-yaml`;
- Xet token routes answer 501: this Hub offers no Xet storage.

Permissions (hub_auth.py): no token -> 401 (the client reports RepositoryNotFound, as it does
against the real Hub); an unknown token -> 401 "Invalid credentials in Authorization header";
a token without the right -> 403. Pull requests need read access only.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import hashlib
import json
import re
import secrets
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tests.support import hub_discussions
from tests.support.hub_http import Answer, Request, error, iso_time, json_answer, truthy
from tests.support.hub_repo import (
    GITATTRIBUTES,
    Discussion,
    FakeRepo,
    RepoType,
    StoredFile,
)

if TYPE_CHECKING:
    from tests.support.hub_server import FakeHub

REGULAR_MAX = 10 * 1024 * 1024  # preupload sends larger files to LFS
LFS_JSON = "application/vnd.git-lfs+json"
XET_REFUSAL = "Xet storage is not offered by this Hub: upload over the LFS protocol"
SHA256 = re.compile(r"^[0-9a-f]{64}$")
NOT_AUTHENTICATED = "You must be authenticated to access this resource"
INVALID_TOKEN = "Invalid credentials in Authorization header"


class Refused(Exception):
    """A request refused with this answer (raised deep, answered at the top)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__(answer.headers.get("X-Error-Message", ""))
        self.answer = answer


def handle(hub: FakeHub, req: Request) -> Answer:
    try:
        return _route(hub, req)
    except Refused as refused:
        return refused.answer


def _route(hub: FakeHub, req: Request) -> Answer:
    route = req.route
    if route == "whoami":
        _need_token(req)
        assert req.token is not None
        return json_answer(req.token.whoami())
    if route == "create_repo":
        return _create_repo(hub, req)
    if route == "validate_yaml":
        return json_answer({"errors": [], "warnings": []})
    if route == "lfs_upload":
        return _lfs_put(hub, req)
    target = hub.repo_target(req.segments)
    if target is None:
        return error(404, None, "Not Found")
    kind, repo_id, rest = target
    repo = hub.get_repo(repo_id, kind)
    refused = hub.refuse_read(req, repo)
    if refused is not None:
        return refused
    assert repo is not None
    handlers = {
        "xet_token": lambda: error(501, None, XET_REFUSAL),
        "preupload": lambda: _preupload(hub, req, repo, rest[1]),
        "lfs_batch": lambda: _lfs_batch(hub, req, repo),
        "lfs_verify": lambda: _lfs_verify(hub, req, repo),
        "commit": lambda: _commit(hub, req, repo, rest[1]),
        "branch": lambda: _create_branch(hub, req, repo, rest[1]),
        "auth_check": lambda: _auth_check(req, repo, rest[1:] == ["write"]),
        "discussion_create": lambda: _create_discussion(hub, req, repo),
        "discussions": lambda: _list_discussions(repo, req.query),
        "discussion": lambda: hub_discussions.details(hub, repo, rest[1]),
        "discussion_comment": lambda: hub_discussions.post_comment(hub, req, repo, rest[1]),
        "discussion_comment_edit": lambda: hub_discussions.edit_comment(hub, req, repo,
                                                                        rest[1], rest[3]),
    }
    answer = handlers.get(route)
    return answer() if answer is not None else error(404, None, "Not Found")


# --- permissions ----------------------------------------------------------------------------
def _need_token(req: Request) -> None:
    if req.token is None:
        raise Refused(error(401, None, INVALID_TOKEN if req.bearer else NOT_AUTHENTICATED))


def _need_write(req: Request, namespace: str, what: str) -> None:
    _need_token(req)
    assert req.token is not None
    if not req.token.may_write(namespace):
        raise Refused(error(403, None, f"You don't have the rights to {what} under the "
                                       f"namespace \"{namespace}\""))


def _pr_number(rev: str) -> int | None:
    return int(rev[8:]) if rev.startswith("refs/pr/") and rev[8:].isdigit() else None


def _need_commit_right(req: Request, repo: FakeRepo, rev: str, create_pr: bool) -> None:
    """Opening a pull request needs a token only; pushing to one, being its author or a
    writer; anything else, write access."""
    _need_token(req)
    assert req.token is not None
    num = _pr_number(rev)
    if create_pr:
        return
    if num is not None:
        author = next((d.author for d in repo.discussions if d.num == num), None)
        if author == req.token.user or req.token.may_write(repo.namespace):
            return
        raise Refused(error(403, None, f"You cannot push to pull request #{num}"))
    _need_write(req, repo.namespace, f"write to {repo.repo_id}")


# --- repos ----------------------------------------------------------------------------------
def _create_repo(hub: FakeHub, req: Request) -> Answer:
    body = req.json()
    if not isinstance(body, dict) or not isinstance(body.get("name"), str):
        return error(400, None, "name is required")
    kind = body.get("type") or "model"
    if kind not in ("model", "dataset"):
        return error(400, None, f"this Hub hosts model and dataset repos, not {kind!r}")
    _need_token(req)
    assert req.token is not None
    namespace = body.get("organization") or req.token.user
    _need_write(req, namespace, f"create a {kind}")
    repo_type: RepoType = "dataset" if kind == "dataset" else "model"
    repo_id = f"{namespace}/{body['name']}"
    with hub.lock:
        existing = hub.get_repo(repo_id, repo_type)
        url = f"http://{req.host}/{'datasets/' if repo_type == 'dataset' else ''}{repo_id}"
        if existing is not None:
            return json_answer({"error": f"You already created this {kind} repo", "url": url},
                               409, {"X-Error-Message": "Repository already exists"})
        repo = hub.create_repo(repo_id, repo_type=repo_type,
                               private=body.get("visibility") == "private")
        files = {".gitattributes": hub.store_file(".gitattributes", GITATTRIBUTES, False)}
        repo.branches["main"] = hub.add_commit(repo, None, files, title="initial commit",
                                               author=req.token.user)
    return json_answer({"url": url, "name": repo_id, "id": hashlib.md5(url.encode()).hexdigest()})


def _auth_check(req: Request, repo: FakeRepo, write: bool) -> Answer:
    if write:
        _need_write(req, repo.namespace, f"write to {repo.repo_id}")
    return json_answer({"ok": True})


def _create_branch(hub: FakeHub, req: Request, repo: FakeRepo, branch: str) -> Answer:
    _need_write(req, repo.namespace, f"create a branch in {repo.repo_id}")
    start = (req.json() or {}).get("startingPoint")
    with hub.lock:
        if branch in repo.branches:
            return error(409, None, f"Reference refs/heads/{branch} already exists")
        sha = repo.resolve(start) if start is not None else repo.branches.get("main")
        if sha is None:
            return error(404, "RevisionNotFound", f"Invalid rev id: {start}")
        repo.branches[branch] = sha
    return json_answer({})


# --- preupload and LFS ------------------------------------------------------------------------
def _lfs_patterns(files: dict[str, StoredFile], hub: FakeHub) -> list[str]:
    stored = files.get(".gitattributes")
    text = (hub.blobs.get(stored.key, b"") if stored else GITATTRIBUTES).decode("utf-8",
                                                                                "replace")
    return [line.split()[0] for line in text.splitlines()
            if line.strip() and not line.startswith("#") and "filter=lfs" in line]


def _is_lfs(path: str, size: int, sample: bytes, patterns: list[str]) -> bool:
    name = path.rsplit("/", 1)[-1]
    matched = any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(path, p) for p in patterns)
    return matched or size > REGULAR_MAX or b"\0" in sample


def _preupload(hub: FakeHub, req: Request, repo: FakeRepo, rev: str) -> Answer:
    _need_commit_right(req, repo, rev, truthy(req.query, "create_pr"))
    body = req.json()
    if not isinstance(body, dict) or not isinstance(body.get("files"), list):
        return error(400, None, "files is required")
    with hub.lock:
        sha = repo.resolve(rev)
        if sha is None:
            return error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        head = repo.commits[sha].files
        patterns = _lfs_patterns(head, hub)
    out: list[dict[str, Any]] = []
    for item in body["files"]:
        try:
            path, size = str(item["path"]), int(item["size"])
            sample = base64.b64decode(item.get("sample") or "")
        except (KeyError, TypeError, ValueError, binascii.Error):
            return error(400, None, f"malformed preupload entry: {item!r}")
        mode = "lfs" if _is_lfs(path, size, sample, patterns) else "regular"
        existing = head.get(path)
        oid = None
        if existing is not None:
            oid = existing.lfs_sha256 if mode == "lfs" else existing.blob_id
        out.append({"path": path, "uploadMode": mode, "shouldIgnore": False, "oid": oid})
    return json_answer({"files": out, "commitOid": sha})


def _lfs_batch(hub: FakeHub, req: Request, repo: FakeRepo) -> Answer:
    _need_token(req)
    body = req.json()
    if not isinstance(body, dict) or body.get("operation") != "upload":
        return error(400, None, "only the upload operation is supported")
    objects = body.get("objects")
    if not isinstance(objects, list):
        return error(400, None, "objects is required")
    basic = "basic" in (body.get("transfers") or ["basic"])
    verify = f"http://{req.host}/{repo.url_path}.git/info/lfs/objects/verify"
    out: list[dict[str, Any]] = []
    for obj in objects:
        oid, size = obj.get("oid"), obj.get("size")
        if not (isinstance(oid, str) and SHA256.match(oid) and isinstance(size, int)
                and size >= 0):
            return error(400, None, f"malformed LFS object {obj!r}")
        if not basic:
            out.append({"oid": oid, "size": size,
                        "error": {"code": 422, "message": "only the basic transfer is offered"}})
            continue
        with hub.lock:
            present = oid in repo.lfs_objects and len(hub.blobs.get(oid, b"")) == size
            key = secrets.token_hex(16)
            if not present:
                hub.pending_uploads[key] = (repo, oid, size)
        entry: dict[str, Any] = {"oid": oid, "size": size, "authenticated": True}
        if not present:
            entry["actions"] = {
                "upload": {"href": f"{hub.lfs_url}/lfs-upload/{key}", "header": {}},
                "verify": {"href": verify, "header": {}}}
        out.append(entry)
    return json_answer({"transfer": "basic", "objects": out, "hash_algo": "sha256"},
                       content_type=LFS_JSON)


def _lfs_put(hub: FakeHub, req: Request) -> Answer:
    """The storage origin: the object is kept only when its bytes hash to the promised oid."""
    with hub.lock:
        promised = hub.pending_uploads.get(req.segments[1])
    if promised is None:
        return error(403, None, "upload URL unknown or expired")
    repo, oid, size = promised
    if len(req.body) != size or hashlib.sha256(req.body).hexdigest() != oid:
        return error(400, None, f"uploaded bytes do not match the object {oid} ({size} bytes)")
    with hub.lock:
        hub.blobs[oid] = req.body
        repo.lfs_objects.add(oid)
    return Answer(200, b"", {"ETag": f'"{oid}"'})


def _lfs_verify(hub: FakeHub, req: Request, repo: FakeRepo) -> Answer:
    _need_token(req)
    body = req.json() or {}
    oid, size = body.get("oid"), body.get("size")
    with hub.lock:
        data = hub.blobs.get(oid) if oid in repo.lfs_objects else None
    if data is None or len(data) != size:
        return error(404, None, f"object {oid} was not uploaded")
    return json_answer({"success": True})


# --- commits ----------------------------------------------------------------------------------
def _ndjson(body: bytes) -> Iterator[dict[str, Any]]:
    for line in body.splitlines():
        if line.strip():
            item = json.loads(line)
            if not isinstance(item, dict):
                raise ValueError("not an object")
            yield item


def _clean_path(path: Any) -> str:
    if not isinstance(path, str) or not path or path.startswith("/") or any(
            part in ("", ".", "..") for part in path.split("/")):
        raise Refused(error(400, None, f"invalid path in commit: {path!r}"))
    return path


def _apply_ops(hub: FakeHub, repo: FakeRepo, files: dict[str, StoredFile],
               ops: list[dict[str, Any]]) -> dict[str, StoredFile]:
    """The file list after `ops`; raises Refused (and changes nothing) on any bad op."""
    out = dict(files)
    for op in ops:
        key, value = op.get("key"), op.get("value") or {}
        raw = value.get("path")
        path = _clean_path(raw.rstrip("/") if key == "deletedFolder" and isinstance(raw, str)
                           else raw)
        if key == "file":
            if value.get("encoding", "base64") != "base64":
                raise Refused(error(400, None, "file content must be base64"))
            try:
                content = base64.b64decode(value.get("content") or "", validate=True)
            except (binascii.Error, ValueError):
                raise Refused(error(400, None, f"{path}: content is not base64")) from None
            out[path] = hub.store_file(path, content, False)
        elif key == "lfsFile":
            oid, size = value.get("oid"), value.get("size")
            data = hub.blobs.get(oid) if oid in repo.lfs_objects else None
            if data is None or (size is not None and len(data) != size):
                raise Refused(error(422, None, f"Your push was rejected because an LFS pointer "
                                               f"pointed to a file that does not exist: {path}"))
            out[path] = hub.lfs_file(path, str(oid), len(data))
        elif key == "deletedFile":
            if out.pop(path, None) is None:
                raise Refused(error(404, "EntryNotFound",
                                    f"A file with this name doesn't exist: {path}"))
        elif key == "deletedFolder":
            prefix = path + "/"
            for name in [n for n in out if n.startswith(prefix)]:
                del out[name]
        else:
            raise Refused(error(400, None, f"unknown commit operation {key!r}"))
    return out


def _commit(hub: FakeHub, req: Request, repo: FakeRepo, rev: str) -> Answer:
    create_pr = truthy(req.query, "create_pr")
    pr_num = _pr_number(rev)
    _need_commit_right(req, repo, rev, create_pr)
    assert req.token is not None
    try:
        lines = list(_ndjson(req.body))
    except ValueError:
        return error(400, None, "the commit payload is not NDJSON")
    if not lines or lines[0].get("key") != "header":
        return error(400, None, "the first line of a commit must be its header")
    header = lines[0].get("value") or {}
    branch = rev.removeprefix("refs/heads/")
    with hub.lock:
        if pr_num is not None and not create_pr:
            if pr_num not in repo.pulls:
                return error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
            parent: str | None = repo.pulls[pr_num]
        elif branch in repo.branches:
            parent = repo.branches[branch]
        elif repo.resolve(rev) is not None:
            return error(400, None, f"Invalid rev id: {rev} is not a branch: commits go to "
                                    "branches and pull requests")
        else:
            return error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        expected = header.get("parentCommit")
        if expected is not None and expected != parent:
            return error(412, None, "A commit has happened since. Please refresh and try "
                                    "again.")
        base_files = repo.commits[parent].files if parent else {}
        files = _apply_ops(hub, repo, base_files, lines[1:])
        sha = hub.add_commit(repo, parent, files, title=str(header.get("summary") or ""),
                             description=str(header.get("description") or ""),
                             author=req.token.user)
        answer: dict[str, Any] = {"success": True, "commitOid": sha, "hookOutput": "",
                                  "commitUrl": f"http://{req.host}/{repo.url_path}/commit/{sha}"}
        opened: Discussion | None = None
        moved: tuple[str, str | None]
        if create_pr:
            num = repo.next_discussion_num()
            title = str(header.get("summary") or "Pull request")
            opened = Discussion(num, title, req.token.user, True,
                                str(header.get("description") or ""),
                                base=f"refs/heads/{branch}")
            repo.discussions.append(opened)
            repo.pulls[num] = sha
            answer["pullRequestUrl"] = f"http://{req.host}/{repo.url_path}/discussions/{num}"
            moved = (f"refs/pr/{num}", None)
        elif pr_num is not None:
            repo.pulls[pr_num] = sha
            moved = (f"refs/pr/{pr_num}", parent)
        else:
            repo.branches[branch] = sha
            moved = (f"refs/heads/{branch}", parent)
    hub.ref_moved(repo, moved[0], moved[1], sha)  # webhooks, as the Hub fires them
    if opened is not None:
        hub.discussion_changed(repo, opened, "create")
    return json_answer(answer)


# --- discussions ------------------------------------------------------------------------------
def _discussion(repo: FakeRepo, d: Discussion) -> dict[str, Any]:
    return {"num": d.num, "title": d.title, "author": {"name": d.author},
            "createdAt": iso_time(d.created_at), "status": d.status,
            "repo": {"name": repo.repo_id, "type": repo.repo_type},
            "isPullRequest": d.is_pull_request}


def _create_discussion(hub: FakeHub, req: Request, repo: FakeRepo) -> Answer:
    _need_token(req)
    assert req.token is not None
    body = req.json()
    if not isinstance(body, dict) or not str(body.get("title") or "").strip():
        return error(400, None, "title is required")
    with hub.lock:
        num = repo.next_discussion_num()
        is_pr = bool(body.get("pullRequest"))
        main = repo.branches.get("main")
        if is_pr and main is None:
            return error(400, None, "the repo has no main branch to open a pull request on")
        opened = Discussion(num, str(body["title"]), req.token.user, is_pr,
                            str(body.get("description") or ""),
                            status="draft" if is_pr else "open")
        repo.discussions.append(opened)
        if is_pr and main is not None:
            repo.pulls[num] = main
    if is_pr:
        hub.ref_moved(repo, f"refs/pr/{num}", None, main)
    hub.discussion_changed(repo, opened, "create")
    return json_answer({"num": num, "pullRequest": is_pr})


PAGE = 50  # discussions per page, as the Hub pages them


def _list_discussions(repo: FakeRepo, query: dict[str, list[str]]) -> Answer:
    """Newest first, filtered by `type` (discussion|pull_request|all), `status`
    (open|closed|merged|draft|all) and `author`, paged by `p`."""
    kind, status = (query.get("type") or ["all"])[0], (query.get("status") or ["all"])[0]
    author = query["author"][0] if query.get("author") else None
    found = [d for d in reversed(repo.discussions)
             if kind == "all" or d.is_pull_request == (kind == "pull_request")
             if status == "all" or d.status == status
             if author is None or d.author == author]
    page = int((query.get("p") or ["0"])[0])
    items = [_discussion(repo, d) for d in found[page * PAGE:(page + 1) * PAGE]]
    return json_answer({"discussions": items, "count": len(found), "start": page * PAGE})
