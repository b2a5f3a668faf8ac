"""A fake Hugging Face Hub for tests: a stdlib HTTP/1.1 server on 127.0.0.1.

It speaks what huggingface_hub (and meshcert's own range client) use, as the project's hub
spec (hub.md) describes: model_info/dataset_info with blobs, tree with Link paging,
paths-info, refs, HEAD/GET resolve with X-Repo-Commit / X-Linked-Etag / X-Linked-Size, LFS
files answered with a 302 to a different origin (`localhost` when serving on `127.0.0.1`),
Range/206, and errors classified by `X-Error-Code`; model repos and dataset repos alike
(`/api/datasets/...`, `/datasets/<id>/resolve/...`). Repos live in memory (hub_repo.py), at as
many commits, branches, tags and pull-request refs as a test needs.

Writes (hub_uploads.py): whoami-v2, create_repo, preupload, the LFS batch API with the basic
transfer (PUT to the storage origin, then verify), NDJSON commits (with parent commit and
create_pr), branches, discussions and pull requests, auth-check. Xet is NOT offered: its token
routes answer 501, so a client that tries Xet fails and a test proves the LFS path was used.
Who may write is decided by a token table (hub_auth.py, `hub.add_token(...)`).

Jobs (hub_jobs.py): run, inspect, logs (server-sent events, follow or not), cancel, list and
the hardware list; a job's command really runs here, in a private mount namespace with its
volumes mounted read-only (see hub_jobs.py).

Faults (status codes, Retry-After, dropped connections, truncated bodies, delays) are injected
per route (`after=` lets the first matching requests through, for a failure mid-way), an
optional latency (`FakeHub(latency_s=0.05)`) delays every request as a far-away Hub would, and
every request is recorded (route, host, Range, whether an Authorization header came, body bytes
sent and received).

    hub = FakeHub().start()
    sha = hub.publish_dir("ns/pkg", package_root)       # .gguf files stored as LFS
    hub.add_token("hf_alice", user="alice", orgs={"meshllm": "write"})
    hub.inject("model_info", status=503, times=2, headers={"Retry-After": "3"})
    ...
    hub.stop()
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any, Literal, cast
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.support import hub_discussions, hub_uploads
from tests.support.hub_auth import HubToken, OrgRole, Role, TokenTable
from tests.support.hub_http import (
    Answer,
    Fault,
    FaultMode,
    Handler,
    Request,
    RequestRecord,
    Server,
    StreamAnswer,
    error,
    iso_time,
    json_answer,
    parse_range,
    read_body,
    send_stream,
    truthy,
)
from tests.support.hub_jobs import JobService
from tests.support.hub_repo import Commit, Discussion, FakeRepo, HubStore, RepoType
from tests.support.hub_webhooks import WebhookService

DISABLED_MESSAGE = "Access to this resource is disabled."
HARNESSES: dict[str, Any] = {"standardEnvVars": [], "harnesses": {}}
Route = Literal[
    # reads
    "harness", "model_info", "dataset_info", "tree", "paths_info", "refs", "resolve", "lfs",
    "commits",
    # writes (hub_uploads)
    "whoami", "create_repo", "validate_yaml", "preupload", "lfs_batch", "lfs_upload",
    "lfs_verify", "commit", "branch", "auth_check", "xet_token", "discussion_create",
    "discussions", "discussion", "discussion_comment", "discussion_comment_edit",
    # webhooks and orgs (hub_webhooks, hub_discussions)
    "webhooks_create", "org_members",
    # jobs (hub_jobs)
    "jobs_run", "jobs_list", "jobs_inspect", "jobs_logs", "jobs_cancel", "jobs_hardware",
    "unknown"]
REPO_API: dict[tuple[str, str], Route] = {
    ("GET", "revision"): "model_info", ("GET", "tree"): "tree",
    ("POST", "paths-info"): "paths_info", ("GET", "refs"): "refs",
    ("GET", "commits"): "commits", ("POST", "preupload"): "preupload",
    ("POST", "commit"): "commit", ("POST", "branch"): "branch",
    ("GET", "auth-check"): "auth_check", ("POST", "discussions"): "discussion_create",
    ("GET", "discussions"): "discussions",
}
ACCESS_CHECK_ROUTES = frozenset({"whoami", "auth_check"})
READ_ROUTES = frozenset({"model_info", "dataset_info", "tree", "paths_info", "refs",
                         "resolve", "commits"})
# the real Hub answers these (read) routes with the revision at this segment index
REV_INDEX = {"model_info": 5, "dataset_info": 5, "tree": 5, "paths_info": 5, "commits": 5}


class FakeHub(HubStore):
    """The fake Hub. Thread-safe; use as a context manager or start()/stop()."""

    def __init__(self, *, page_size: int = 1000, lfs_host: str = "localhost",
                 latency_s: float = 0.0) -> None:
        super().__init__()
        self.latency_s = latency_s  # every request waits this long before it is answered
        self.in_flight = 0  # requests being handled now
        self.max_in_flight = 0  # the most handled at once since reset_counters()
        self.faults: list[Fault] = []
        self.records: list[RequestRecord] = []
        self.page_size = page_size
        self.lfs_host = lfs_host
        self.ignore_ranges = False  # True: answer 200 with the whole body, as some servers do
        self.sleeps: list[float] = []  # backoff sleeps the client asked for (see hub_env)
        self.tokens = TokenTable()
        # upload key -> (repo, sha256, size): where the storage origin accepts a PUT
        self.pending_uploads: dict[str, tuple[FakeRepo, str, int]] = {}
        self.jobs = JobService(self)
        self.webhooks = WebhookService(self)
        self._stopping = threading.Event()
        self._server: Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def start(self, port: int = 0) -> FakeHub:
        server = Server(("127.0.0.1", port), Handler)
        server.hub = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={
            "poll_interval": 0.05}, name="fake-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self.jobs.shutdown()
        self.webhooks.shutdown()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def stopping(self) -> threading.Event:
        return self._stopping

    @property
    def port(self) -> int:
        assert self._server is not None, "start() the fake Hub first"
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def lfs_url(self) -> str:
        return f"http://{self.lfs_host}:{self.port}"

    # --- tokens ---------------------------------------------------------------------------
    def add_token(self, value: str, *, user: str, orgs: Mapping[str, OrgRole] | None = None,
                  role: Role = "write",
                  scopes: Mapping[str, Literal["read", "write"]] | None = None) -> HubToken:
        """A token the Hub knows: `role` read|write|fineGrained (then `scopes` per namespace);
        `orgs` maps each org the user is in to their role there."""
        return self.tokens.add(HubToken(value, user, dict(orgs or {}), role, dict(scopes or {})))

    # --- events, delivered as webhooks (hub_webhooks.py) ------------------------------------
    def ref_moved(self, repo: FakeRepo, ref: str, old: str | None, new: str | None) -> None:
        self.webhooks.ref_moved(repo, ref, old, new)

    def discussion_changed(self, repo: FakeRepo, discussion: Discussion, action: str) -> None:
        self.webhooks.discussion_event(repo, discussion, action)

    # --- faults and counters --------------------------------------------------------------
    def inject(self, route: str, status: int = 503, *, times: int | None = 1,
               headers: Mapping[str, str] | None = None, body: bytes | None = None,
               mode: FaultMode = "status", delay_s: float = 0.0,
               path_contains: str | None = None, without_range: bool = False,
               after: int = 0, method: str | None = None) -> Fault:
        """Fault the next `times` requests of `route` (None: all), once `after` of them went
        through untouched."""
        fault = Fault(route, status, times, dict(headers or {}), body, mode, delay_s,
                      path_contains, without_range, after=after, method=method)
        with self._lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self._lock:
            self.faults.clear()

    def requests(self, route: str | None = None) -> list[RequestRecord]:
        with self._lock:
            return [r for r in self.records if route is None or r.route == route]

    def count(self, route: str | None = None) -> int:
        return len(self.requests(route))

    def only_access_checks(self) -> bool:
        """Whether every request so far only asked who the token is and what it may write
        (the checks a publish or a job makes before any work), and changed nothing."""
        return {r.route for r in self.requests()} <= ACCESS_CHECK_ROUTES

    def bytes_sent(self, route: str | None = None) -> int:
        return sum(r.body_bytes for r in self.requests(route))

    def bytes_received(self, route: str | None = None) -> int:
        return sum(r.bytes_in for r in self.requests(route))

    def reset_counters(self) -> None:
        with self._lock:
            self.records.clear()
            self.max_in_flight = self.in_flight

    # --- request handling -----------------------------------------------------------------
    def _handle(self, handler: Handler, method: str) -> None:
        arrived = time.monotonic()
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        handler.counted = True
        try:
            if self.latency_s > 0:  # a round trip to a far-away Hub, per request
                self._stopping.wait(self.latency_s)
            self._answer(handler, method, arrived)
        finally:
            self._leave(handler)

    def _leave(self, handler: Handler) -> None:
        """The request stops counting as in flight once its answer is about to be written:
        a client that waits for it cannot have sent its next request before then."""
        with self._lock:
            if handler.counted:
                handler.counted = False
                self.in_flight -= 1

    def _pick_fault(self, route: str, target: str, has_range: bool, method: str
                    ) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if not fault.matches(route, target, has_range) or fault.method not in (
                        None, method):
                    continue
                fault.seen += 1
                if fault.seen <= fault.after:
                    continue
                fault.hits += 1
                return fault
        return None

    def _answer(self, handler: Handler, method: str, arrived: float) -> None:
        handler.arrived = arrived
        handler.bytes_in = 0
        target = handler.path
        split = urlsplit(target)
        segments = [unquote(s) for s in split.path.split("/")[1:]]
        query = parse_qs(split.query)
        route = self._route(method, segments)
        body = read_body(handler)
        if body is None:
            handler.close_connection = True
            self._send(handler, method, route, error(413, None, "request body too large"),
                       truncate=False)
            return
        handler.bytes_in = len(body)
        fault = self._pick_fault(route, target, handler.headers.get("Range") is not None,
                                 method)
        answer: Answer | StreamAnswer | None = None
        mode: FaultMode = "status"
        if fault is not None:
            mode = fault.mode
            if mode == "delay":
                self._stopping.wait(fault.delay_s)
            elif mode == "status":
                answer = Answer(fault.status, fault.body or json.dumps(
                    {"error": f"injected {fault.status}"}).encode(),
                    {"Content-Type": "application/json", **fault.headers})
        if mode == "drop":
            self._record(handler, method, route, 0, 0)
            handler.close_connection = True
            return
        if answer is None:
            bearer = TokenTable.bearer(handler.headers.get("Authorization"))
            # handler.headers is an email Message: a Mapping in behaviour (its .get is
            # case-insensitive, which dict(...) would lose), not in its declared type.
            headers = cast("Mapping[str, str]", handler.headers)
            request = Request(method, route, segments, query, body, headers,
                              handler.headers.get("Host") or f"127.0.0.1:{self.port}",
                              self.tokens.get(bearer), bearer)
            try:
                answer = self._dispatch(handler, request)
            except Exception as exc:  # a bug in the fake: answer 500 rather than hang
                answer = error(500, None, f"fake hub error: {type(exc).__name__}: {exc}")
        if isinstance(answer, StreamAnswer):
            self._send_stream(handler, method, route, answer)
            return
        self._send(handler, method, route, answer, truncate=mode == "truncate")

    def _send(self, handler: Handler, method: str, route: str, answer: Answer, *,
              truncate: bool) -> None:
        body = b"" if method == "HEAD" else answer.body
        sent = body[: len(body) // 2] if truncate else body
        self._record(handler, method, route, answer.status, len(sent))
        self._leave(handler)
        try:
            handler.send_response(answer.status)
            for name, value in answer.headers.items():
                handler.send_header(name, value)
            if "Content-Length" not in answer.headers:
                handler.send_header("Content-Length", str(len(answer.body)))
            if truncate:
                handler.send_header("Connection", "close")
            handler.end_headers()
            if sent:
                handler.wfile.write(sent)
            handler.wfile.flush()
        except OSError:
            handler.close_connection = True
            return
        if truncate:
            handler.close_connection = True

    def _send_stream(self, handler: Handler, method: str, route: str,
                     answer: StreamAnswer) -> None:
        sent = [0]
        self._leave(handler)

        def count(n: int) -> None:
            sent[0] += n

        send_stream(handler, answer, count)
        self._record(handler, method, route, answer.status, sent[0])

    def _record(self, handler: Handler, method: str, route: str, status: int,
                nbytes: int) -> None:
        record = RequestRecord(method, route, handler.path, handler.headers.get("Host", ""),
                               status, nbytes, handler.headers.get("Range"),
                               handler.headers.get("Authorization"), handler.arrived,
                               handler.bytes_in)
        with self._lock:
            self.records.append(record)

    # --- routing --------------------------------------------------------------------------
    @staticmethod
    def repo_target(seg: list[str]) -> tuple[RepoType, str, list[str]] | None:
        """(repo type, repo id, the segments after it) for a repo URL, API or web."""
        if seg[:1] == ["api"]:
            if len(seg) >= 4 and seg[1] in ("models", "datasets"):
                kind: RepoType = "dataset" if seg[1] == "datasets" else "model"
                return kind, f"{seg[2]}/{seg[3]}", seg[4:]
            return None
        kind = "dataset" if seg[:1] == ["datasets"] else "model"
        web = seg[1:] if kind == "dataset" else seg
        if len(web) >= 2 and web[1].endswith(".git"):
            return kind, f"{web[0]}/{web[1][:-4]}", ["git", *web[2:]]
        if len(web) >= 5 and web[2] == "resolve":
            return kind, f"{web[0]}/{web[1]}", web[2:]
        return None

    @classmethod
    def _route(cls, method: str, seg: list[str]) -> Route:
        if seg[:1] == ["api"]:
            special = cls._api_route(method, seg[1:])
            if special is not None:
                return special
        target = cls.repo_target(seg)
        if target is not None:
            return cls._repo_route(method, seg[:1] == ["api"], target[0], target[2])
        if len(seg) == 2 and seg[0] == "lfs" and method in ("GET", "HEAD"):
            return "lfs"
        if len(seg) == 2 and seg[0] == "lfs-upload" and method == "PUT":
            return "lfs_upload"
        return "unknown"

    @staticmethod
    def _api_route(method: str, rest: list[str]) -> Route | None:
        if rest == ["agent-harnesses"]:
            return "harness"
        if rest == ["whoami-v2"]:
            return "whoami"
        if rest == ["repos", "create"] and method == "POST":
            return "create_repo"
        if rest == ["validate-yaml"] and method == "POST":
            return "validate_yaml"
        if rest == ["settings", "webhooks"] and method == "POST":
            return "webhooks_create"
        if len(rest) == 3 and rest[0] == "organizations" and rest[2] == "members":
            return "org_members" if method == "GET" else "unknown"
        if rest[:1] != ["jobs"]:
            return None
        jobs = rest[1:]
        if jobs == ["hardware"]:
            return "jobs_hardware"
        if len(jobs) == 1:
            return "jobs_run" if method == "POST" else "jobs_list"
        if len(jobs) == 2 and method == "GET":
            return "jobs_inspect"
        if len(jobs) == 3 and jobs[2] == "logs" and method == "GET":
            return "jobs_logs"
        if len(jobs) == 3 and jobs[2] == "cancel" and method == "POST":
            return "jobs_cancel"
        return "unknown"

    @staticmethod
    def _repo_route(method: str, api: bool, kind: RepoType, rest: list[str]) -> Route:
        if not api:
            if rest[:1] == ["resolve"]:
                return "resolve"
            if rest[1:] == ["info", "lfs", "objects", "batch"] and method == "POST":
                return "lfs_batch"
            if rest[1:] == ["info", "lfs", "objects", "verify"] and method == "POST":
                return "lfs_verify"
            return "unknown"
        info: Route = "dataset_info" if kind == "dataset" else "model_info"
        if not rest:
            return info if method in ("GET", "HEAD") else "unknown"
        if rest[0].startswith("xet-") and rest[0].endswith("-token"):
            return "xet_token"
        if rest[0] == "discussions" and len(rest) == 2 and method == "GET":
            return "discussion"
        if rest[0] == "discussions" and len(rest) >= 3 and rest[2] == "comment" \
                and method == "POST":
            if len(rest) == 3:
                return "discussion_comment"
            return "discussion_comment_edit" if len(rest) == 5 and rest[4] == "edit" \
                else "unknown"
        route = REPO_API.get((method, rest[0]))
        if route is None:
            return "unknown"
        if route == "model_info":
            return info if len(rest) == 2 else "unknown"
        if route == "tree":
            return route if len(rest) >= 2 else "unknown"
        if route in ("refs", "discussion_create", "discussions"):
            return route if len(rest) == 1 else "unknown"
        if route == "auth_check":
            return route if rest[1:] in ([], ["write"]) else "unknown"
        return route if len(rest) == 2 else "unknown"

    # --- dispatch -------------------------------------------------------------------------
    def _dispatch(self, handler: Handler, req: Request) -> Answer | StreamAnswer:
        route = req.route
        if route == "harness":
            return json_answer(HARNESSES)
        if route == "lfs":
            return self._serve_blob(handler, req.segments[1])
        if route == "unknown":
            return error(404, None, "Not Found")
        if route.startswith("jobs_"):
            return self.jobs.handle(req)
        if route == "webhooks_create":
            return self.webhooks.handle(req)
        if route == "org_members":
            return hub_discussions.org_members(self, req.segments[2])
        if route not in READ_ROUTES:
            return hub_uploads.handle(self, req)
        target = self.repo_target(req.segments)
        assert target is not None
        kind, repo_id, _ = target
        repo = self.get_repo(repo_id, kind)
        refused = self.refuse_read(req, repo)
        if refused is not None or repo is None:
            return refused or error(404, "RepoNotFound", "Repository not found")
        if route == "refs":
            return self._refs(repo, truthy(req.query, "include_prs"))
        seg = req.segments
        rev = (seg[REV_INDEX[route]] if len(seg) > REV_INDEX[route] else None
               ) if route != "resolve" else self._resolve_rev(seg)
        sha = repo.resolve(rev)
        if sha is None:
            return error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        commit = repo.commits[sha]
        if route in ("model_info", "dataset_info"):
            return self._repo_info(repo, commit, truthy(req.query, "blobs"))
        if route == "tree":
            return self._tree(handler, commit, "/".join(seg[6:]), req.query)
        if route == "paths_info":
            form = parse_qs(req.body.decode("utf-8", "replace"))
            return self._paths_info(commit, form.get("paths", []))
        if route == "commits":
            return self._commits(req, repo, commit)
        return self._resolve(handler, req.method, repo, commit, self._resolve_path(seg))

    @staticmethod
    def _resolve_rev(seg: list[str]) -> str:
        return seg[4] if seg[0] == "datasets" else seg[3]

    @staticmethod
    def _resolve_path(seg: list[str]) -> str:
        return "/".join(seg[5:] if seg[0] == "datasets" else seg[4:])

    def refuse_read(self, req: Request, repo: FakeRepo | None) -> Answer | None:
        """The answer refusing to show `repo` to this caller, or None when it may read it."""
        if repo is None:
            return error(404, "RepoNotFound", "Repository not found")
        if repo.disabled:
            return error(403, None, DISABLED_MESSAGE)
        authorization = req.headers.get("Authorization")
        if repo.required_token and authorization != f"Bearer {repo.required_token}":
            return error(401, None, "Invalid username or password.")
        if repo.private and not (req.token and req.token.may_read(repo.namespace)):
            return error(404, "RepoNotFound", "Repository not found")
        return None

    def _repo_info(self, repo: FakeRepo, commit: Commit, blobs: bool) -> Answer:
        data: dict[str, Any] = {
            "_id": hashlib.md5(repo.url_path.encode()).hexdigest()[:24], "id": repo.repo_id,
            "author": repo.namespace, "sha": commit.sha,
            "lastModified": iso_time(commit.created_at),
            "private": repo.private or repo.required_token is not None, "gated": repo.gated,
            "disabled": False, "downloads": 0, "likes": 0, "tags": [],
        }
        if repo.repo_type == "model":
            data |= {"modelId": repo.repo_id, "tags": ["gguf"], "library_name": "gguf"}
        if repo.model_info_siblings:
            data["siblings"] = [f.sibling(blobs) for _, f in sorted(commit.files.items())]
        return json_answer(data)

    @staticmethod
    def _folders(commit: Commit) -> set[str]:
        out: set[str] = set()
        for path in commit.files:
            parts = path.split("/")[:-1]
            out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return out

    def _tree(self, handler: Handler, commit: Commit, base: str,
              query: dict[str, list[str]]) -> Answer:
        folders = self._folders(commit)
        if base and base not in folders:
            return error(404, "EntryNotFound", f"{base} does not exist")
        recursive = truthy(query, "recursive")
        prefix = f"{base}/" if base else ""

        def wanted(path: str) -> bool:
            return path.startswith(prefix) and (recursive or "/" not in path[len(prefix):])

        entries: list[dict[str, Any]] = [
            {"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0,
             "path": d} for d in sorted(folders) if wanted(d)]
        entries += [f.tree_entry() for p, f in sorted(commit.files.items()) if wanted(p)]
        size = min(50, self.page_size) if truthy(query, "expand") else self.page_size
        start = int((query.get("cursor") or ["0"])[0])
        page = entries[start:start + size]
        headers: dict[str, str] = {}
        if start + size < len(entries):
            params = {k: v[0] for k, v in query.items() if k != "cursor"}
            params["cursor"] = str(start + size)
            qs = "&".join(f"{k}={quote(v)}" for k, v in params.items())
            host = handler.headers.get("Host") or f"127.0.0.1:{self.port}"
            path = urlsplit(handler.path).path
            headers["Link"] = f'<http://{host}{path}?{qs}>; rel="next"'
        return json_answer(page, headers=headers)

    def _paths_info(self, commit: Commit, paths: Iterable[str]) -> Answer:
        folders = self._folders(commit)
        out: list[dict[str, Any]] = []
        for path in paths:
            if path in commit.files:
                out.append(commit.files[path].tree_entry())
            elif path in folders:
                out.append({"type": "directory", "oid": hashlib.sha1(path.encode()).hexdigest(),
                            "size": 0, "path": path})
        return json_answer(out)

    def _refs(self, repo: FakeRepo, include_prs: bool) -> Answer:
        def refs(names: Mapping[str, str], kind: str) -> list[dict[str, str]]:
            return [{"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": s}
                    for n, s in sorted(names.items())]

        data: dict[str, Any] = {"branches": refs(repo.branches, "heads"),
                                "converts": refs(repo.converts, "convert"),
                                "tags": refs(repo.tags, "tags")}
        if include_prs:
            data["pullRequests"] = [{"name": str(n), "ref": f"refs/pr/{n}", "targetCommit": s}
                                    for n, s in sorted(repo.pulls.items())]
        return json_answer(data)

    @staticmethod
    def _commits(req: Request, repo: FakeRepo, head: Commit) -> Answer:
        """list_repo_commits: the history from `head`, newest first (one page)."""
        return json_answer([{
            "id": c.sha, "title": c.title, "message": c.description,
            "authors": [{"user": c.author or "unknown"}], "date": iso_time(c.created_at),
        } for c in repo.history(head.sha)])

    def _resolve(self, handler: Handler, method: str, repo: FakeRepo, commit: Commit,
                 path: str) -> Answer:
        stored = commit.files.get(path)
        if stored is None:
            return error(404, "EntryNotFound", f"{path} does not exist at {commit.sha}")
        bearer = (handler.headers.get("Authorization") or "").removeprefix("Bearer ")
        if repo.gated and bearer not in repo.gated_access:
            return error(403, "GatedRepo", f"Access to model {repo.repo_id} is restricted. "
                         "You must have access to it and be authenticated to access it.")
        common = {"X-Repo-Commit": commit.sha, "Accept-Ranges": "bytes"}
        if stored.lfs_sha256:
            location = f"{self.lfs_url}/lfs/{stored.key}"
            return Answer(302, b"", {**common, "Location": location,
                                     "X-Linked-Etag": f'"{stored.lfs_sha256}"',
                                     "X-Linked-Size": str(stored.size),
                                     "ETag": f'"{stored.blob_id}"', "Content-Length": "0"})
        answer = self._serve_blob(handler, stored.key)
        answer.headers |= {**common, "ETag": f'"{stored.blob_id}"'}
        return answer

    def _serve_blob(self, handler: Handler, key: str) -> Answer:
        with self._lock:
            data = self.blobs.get(key)
        if data is None:
            return error(404, None, "no such object")
        headers = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
        wanted = None if self.ignore_ranges else parse_range(handler.headers.get("Range"),
                                                             len(data))
        if wanted is None:
            return Answer(200, data, headers)
        if isinstance(wanted, str):
            return Answer(416, b"", {**headers, "Content-Range": f"bytes */{len(data)}"})
        start, end = wanted
        return Answer(206, data[start:end + 1],
                      {**headers, "Content-Range": f"bytes {start}-{end}/{len(data)}"})


def main(argv: list[str] | None = None) -> None:
    """`python3 -m tests.support.hub_server --port 8765 --token hf_demo:alice:meshllm=write`:
    this Hub on 127.0.0.1 until Ctrl-C, with the tokens given (VALUE:USER[:ORG=ROLE,...]);
    repos are created and filled through the API as on the real Hub (docs/serve.md)."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(prog="python3 -m tests.support.hub_server",
                                     description=main.__doc__)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--token", action="append", default=[],
                        help="VALUE:USER[:ORG=ROLE,...] (role read|contributor|write|admin)")
    args = parser.parse_args(argv)
    hub = FakeHub()
    for spec in args.token:
        value, user, *rest = spec.split(":")
        orgs = dict(item.split("=", 1) for item in (rest[0].split(",") if rest else []) if item)
        hub.add_token(value, user=user, orgs=cast("dict[str, OrgRole]", orgs))
    hub.start(args.port)
    print(f"fake Hub on {hub.url} (HF_ENDPOINT={hub.url}); Ctrl-C stops it", flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    hub.stop()


if __name__ == "__main__":
    main()
