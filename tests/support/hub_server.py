"""A fake Hugging Face Hub for tests: a stdlib HTTP/1.1 server on 127.0.0.1.

It speaks what huggingface_hub (and meshcert's own range client) use, as the project's hub
spec (hub.md) describes: model_info with blobs, tree with Link paging, paths-info, refs,
HEAD/GET resolve with X-Repo-Commit / X-Linked-Etag / X-Linked-Size, LFS files answered with a
302 to a different origin (`localhost` when serving on `127.0.0.1`), Range/206, and errors
classified by `X-Error-Code`. Repos live in memory (hub_repo.py), at as many commits,
branches, tags and pull-request refs as a test needs. Faults (status codes, Retry-After,
dropped connections, truncated bodies, delays) are injected per route, an optional latency
(`FakeHub(latency_s=0.05)`) delays every request as a far-away Hub would, and every request is
recorded (route, host, Range, whether an Authorization header came, body bytes sent).

    hub = FakeHub().start()
    sha = hub.publish_dir("ns/pkg", package_root)       # .gguf files stored as LFS
    hub.inject("model_info", status=503, times=2, headers={"Retry-After": "3"})
    ...
    hub.stop()
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import parse_qs, quote, unquote, urlsplit

from tests.support.hub_repo import Commit, FakeRepo, HubStore

DISABLED_MESSAGE = "Access to this resource is disabled."
HARNESSES: dict[str, Any] = {"standardEnvVars": [], "harnesses": {}}
Route = Literal["harness", "model_info", "tree", "paths_info", "refs", "resolve", "lfs",
                "unknown"]
FaultMode = Literal["status", "drop", "truncate", "delay"]


@dataclass
class Fault:
    route: str  # a Route, or "any"
    status: int = 503
    times: int | None = 1  # None: forever
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    mode: FaultMode = "status"
    delay_s: float = 0.0
    path_contains: str | None = None
    without_range: bool = False  # only requests with no Range header (whole-file GETs)
    hits: int = 0

    def matches(self, route: str, path: str, has_range: bool = False) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if self.route not in ("any", route) or (self.without_range and has_range):
            return False
        return self.path_contains is None or self.path_contains in path


@dataclass(frozen=True)
class RequestRecord:
    method: str
    route: str
    path: str  # raw request target
    host: str
    status: int
    body_bytes: int
    range: str | None
    authorization: str | None
    arrived: float = 0.0  # time.monotonic() when the request came in


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    # socketserver's default backlog of 5 drops the SYNs of a burst of new connections, which
    # the client then resends after 1 s: a real Hub does not stall concurrent clients so
    request_queue_size = 256
    hub: FakeHub

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # clients hanging up mid-answer are expected (timeouts, drops)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server
    timeout = 30
    arrived = 0.0
    counted = False  # whether FakeHub.in_flight counts this request now

    def do_GET(self) -> None:
        self.server.hub._handle(self, "GET")

    def do_HEAD(self) -> None:
        self.server.hub._handle(self, "HEAD")

    def do_POST(self) -> None:
        self.server.hub._handle(self, "POST")

    def log_message(self, format: str, *args: Any) -> None:
        return None


@dataclass
class _Answer:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> _Answer:
    return _Answer(status, json.dumps(data).encode(),
                   {"Content-Type": "application/json", **(headers or {})})


def _error(status: int, code: str | None, message: str) -> _Answer:
    headers = {"X-Error-Message": message}
    if code:
        headers["X-Error-Code"] = code
    return _json({"error": message}, status, headers)


def _truthy(query: dict[str, list[str]], name: str) -> bool:
    return (query.get(name) or ["false"])[0].lower() in {"1", "true", "yes"}


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
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------
    def start(self) -> FakeHub:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.hub = self
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={
            "poll_interval": 0.05}, name="fake-hub", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

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

    # --- content --------------------------------------------------------------------------
    # --- faults and counters --------------------------------------------------------------
    def inject(self, route: str, status: int = 503, *, times: int | None = 1,
               headers: Mapping[str, str] | None = None, body: bytes | None = None,
               mode: FaultMode = "status", delay_s: float = 0.0,
               path_contains: str | None = None, without_range: bool = False) -> Fault:
        fault = Fault(route, status, times, dict(headers or {}), body, mode, delay_s,
                      path_contains, without_range)
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

    def bytes_sent(self, route: str | None = None) -> int:
        return sum(r.body_bytes for r in self.requests(route))

    def reset_counters(self) -> None:
        with self._lock:
            self.records.clear()
            self.max_in_flight = self.in_flight

    # --- request handling -----------------------------------------------------------------
    def _handle(self, handler: _Handler, method: str) -> None:
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

    def _leave(self, handler: _Handler) -> None:
        """The request stops counting as in flight once its answer is about to be written:
        a client that waits for it cannot have sent its next request before then."""
        with self._lock:
            if handler.counted:
                handler.counted = False
                self.in_flight -= 1

    def _answer(self, handler: _Handler, method: str, arrived: float) -> None:
        handler.arrived = arrived
        target = handler.path
        split = urlsplit(target)
        segments = [unquote(s) for s in split.path.split("/")[1:]]
        query = parse_qs(split.query)
        route = self._route(method, segments)
        length = int(handler.headers.get("Content-Length") or 0)
        form = parse_qs(handler.rfile.read(length).decode()) if length else {}
        with self._lock:
            has_range = handler.headers.get("Range") is not None
            fault = next((f for f in self.faults if f.matches(route, target, has_range)), None)
            if fault is not None:
                fault.hits += 1
        answer: _Answer | None = None
        mode: FaultMode = "status"
        if fault is not None:
            mode = fault.mode
            if mode == "delay":
                self._stopping.wait(fault.delay_s)
            elif mode == "status":
                answer = _Answer(fault.status, fault.body or json.dumps(
                    {"error": f"injected {fault.status}"}).encode(),
                    {"Content-Type": "application/json", **fault.headers})
        if mode == "drop":
            self._record(handler, method, route, 0, 0)
            handler.close_connection = True
            return
        if answer is None:
            try:
                answer = self._dispatch(handler, method, route, segments, query, form)
            except Exception as exc:  # a bug in the fake: answer 500 rather than hang
                answer = _error(500, None, f"fake hub error: {type(exc).__name__}: {exc}")
        self._send(handler, method, route, answer, truncate=mode == "truncate")

    def _send(self, handler: _Handler, method: str, route: str, answer: _Answer, *,
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

    def _record(self, handler: _Handler, method: str, route: str, status: int,
                nbytes: int) -> None:
        record = RequestRecord(method, route, handler.path, handler.headers.get("Host", ""),
                               status, nbytes, handler.headers.get("Range"),
                               handler.headers.get("Authorization"),
                               handler.arrived)
        with self._lock:
            self.records.append(record)

    @staticmethod
    def _route(method: str, seg: list[str]) -> Route:
        if seg[:2] == ["api", "agent-harnesses"]:
            return "harness"
        if len(seg) >= 4 and seg[:2] == ["api", "models"]:
            rest = seg[4:]
            if not rest:
                return "model_info"
            if rest[0] == "revision" and len(rest) == 2:
                return "model_info"
            if rest[0] == "tree" and len(rest) >= 2:
                return "tree"
            if rest[0] == "paths-info" and len(rest) == 2 and method == "POST":
                return "paths_info"
            if rest == ["refs"]:
                return "refs"
        if len(seg) == 2 and seg[0] == "lfs":
            return "lfs"
        if len(seg) >= 5 and seg[2] == "resolve":
            return "resolve"
        return "unknown"

    def _dispatch(self, handler: _Handler, method: str, route: Route, seg: list[str],
                  query: dict[str, list[str]], form: dict[str, list[str]]) -> _Answer:
        if route == "harness":
            return _json(HARNESSES)
        if route == "lfs":
            return self._serve_blob(handler, seg[1])
        if route == "unknown":
            return _error(404, None, "Not Found")
        repo_id = "/".join(seg[2:4]) if seg[0] == "api" else "/".join(seg[0:2])
        with self._lock:
            repo = self.repos.get(repo_id)
        if repo is None:
            return _error(404, "RepoNotFound", "Repository not found")
        if repo.disabled:
            return _error(403, None, DISABLED_MESSAGE)
        if repo.required_token and handler.headers.get(
                "Authorization") != f"Bearer {repo.required_token}":
            return _error(401, None, "Invalid username or password.")
        if route == "refs":
            return self._refs(repo, _truthy(query, "include_prs"))
        rev_index = {"model_info": 5, "tree": 5, "paths_info": 5, "resolve": 3}[route]
        rev = seg[rev_index] if len(seg) > rev_index else None
        sha = repo.resolve(rev)
        if sha is None:
            return _error(404, "RevisionNotFound", f"Invalid rev id: {rev}")
        commit = repo.commits[sha]
        if route == "model_info":
            return self._model_info(repo, commit, _truthy(query, "blobs"))
        if route == "tree":
            return self._tree(handler, commit, "/".join(seg[6:]), query)
        if route == "paths_info":
            return self._paths_info(commit, form.get("paths", []))
        return self._resolve(handler, method, repo, commit, "/".join(seg[4:]))

    def _model_info(self, repo: FakeRepo, commit: Commit, blobs: bool) -> _Answer:
        data: dict[str, Any] = {
            "_id": hashlib.md5(repo.repo_id.encode()).hexdigest()[:24], "id": repo.repo_id,
            "modelId": repo.repo_id, "author": repo.repo_id.split("/")[0], "sha": commit.sha,
            "lastModified": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
            "private": repo.required_token is not None, "gated": repo.gated,
            "disabled": False, "downloads": 0, "likes": 0, "tags": ["gguf"],
            "library_name": "gguf",
        }
        if repo.model_info_siblings:
            data["siblings"] = [f.sibling(blobs) for _, f in sorted(commit.files.items())]
        return _json(data)

    @staticmethod
    def _folders(commit: Commit) -> set[str]:
        out: set[str] = set()
        for path in commit.files:
            parts = path.split("/")[:-1]
            out.update("/".join(parts[: i + 1]) for i in range(len(parts)))
        return out

    def _tree(self, handler: _Handler, commit: Commit, base: str,
              query: dict[str, list[str]]) -> _Answer:
        folders = self._folders(commit)
        if base and base not in folders:
            return _error(404, "EntryNotFound", f"{base} does not exist")
        recursive = _truthy(query, "recursive")
        prefix = f"{base}/" if base else ""

        def wanted(path: str) -> bool:
            return path.startswith(prefix) and (recursive or "/" not in path[len(prefix):])

        entries: list[dict[str, Any]] = [
            {"type": "directory", "oid": hashlib.sha1(d.encode()).hexdigest(), "size": 0,
             "path": d} for d in sorted(folders) if wanted(d)]
        entries += [f.tree_entry() for p, f in sorted(commit.files.items()) if wanted(p)]
        size = min(50, self.page_size) if _truthy(query, "expand") else self.page_size
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
        return _json(page, headers=headers)

    def _paths_info(self, commit: Commit, paths: Iterable[str]) -> _Answer:
        folders = self._folders(commit)
        out: list[dict[str, Any]] = []
        for path in paths:
            if path in commit.files:
                out.append(commit.files[path].tree_entry())
            elif path in folders:
                out.append({"type": "directory", "oid": hashlib.sha1(path.encode()).hexdigest(),
                            "size": 0, "path": path})
        return _json(out)

    def _refs(self, repo: FakeRepo, include_prs: bool) -> _Answer:
        def refs(names: Mapping[str, str], kind: str) -> list[dict[str, str]]:
            return [{"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": s}
                    for n, s in sorted(names.items())]

        data: dict[str, Any] = {"branches": refs(repo.branches, "heads"),
                                "converts": refs(repo.converts, "convert"),
                                "tags": refs(repo.tags, "tags")}
        if include_prs:
            data["pullRequests"] = [{"name": str(i + 1), "ref": f"refs/pr/{i + 1}",
                                     "targetCommit": s} for i, s in enumerate(repo.pulls)]
        return _json(data)

    def _resolve(self, handler: _Handler, method: str, repo: FakeRepo, commit: Commit,
                 path: str) -> _Answer:
        stored = commit.files.get(path)
        if stored is None:
            return _error(404, "EntryNotFound", f"{path} does not exist at {commit.sha}")
        bearer = (handler.headers.get("Authorization") or "").removeprefix("Bearer ")
        if repo.gated and bearer not in repo.gated_access:
            return _error(403, "GatedRepo", f"Access to model {repo.repo_id} is restricted. "
                          "You must have access to it and be authenticated to access it.")
        common = {"X-Repo-Commit": commit.sha, "Accept-Ranges": "bytes"}
        if stored.lfs_sha256:
            location = f"{self.lfs_url}/lfs/{stored.key}"
            return _Answer(302, b"", {**common, "Location": location,
                                      "X-Linked-Etag": f'"{stored.lfs_sha256}"',
                                      "X-Linked-Size": str(stored.size),
                                      "ETag": f'"{stored.blob_id}"', "Content-Length": "0"})
        answer = self._serve_blob(handler, stored.key)
        answer.headers |= {**common, "ETag": f'"{stored.blob_id}"'}
        return answer

    def _serve_blob(self, handler: _Handler, key: str) -> _Answer:
        with self._lock:
            data = self.blobs.get(key)
        if data is None:
            return _error(404, None, "no such object")
        headers = {"Content-Type": "application/octet-stream", "Accept-Ranges": "bytes"}
        wanted = None if self.ignore_ranges else _parse_range(handler.headers.get("Range"),
                                                              len(data))
        if wanted is None:
            return _Answer(200, data, headers)
        if isinstance(wanted, str):
            return _Answer(416, b"", {**headers, "Content-Range": f"bytes */{len(data)}"})
        start, end = wanted
        return _Answer(206, data[start:end + 1],
                       {**headers, "Content-Range": f"bytes {start}-{end}/{len(data)}"})


def _parse_range(value: str | None, size: int) -> tuple[int, int] | str | None:
    """One `bytes=a-b`, `bytes=a-` or `bytes=-n` range; None when absent or not understood."""
    if not value or not value.startswith("bytes=") or "," in value:
        return None
    first, _, last = value[6:].strip().partition("-")
    try:
        if first == "":
            n = int(last)
            start, end = max(0, size - n), size - 1
        else:
            start = int(first)
            end = min(int(last), size - 1) if last else size - 1
    except ValueError:
        return None
    if start >= size or start > end:
        return "unsatisfiable"
    return start, end
