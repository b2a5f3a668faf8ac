"""The fake Hub's webhooks, delivered as the Hub delivers them (shared/spec/hub-webhooks.md):

- `POST /api/settings/webhooks` (HfApi.create_webhook) registers one: a URL, the watched items
  (`{"type": "model"|"dataset"|"user"|"org", "name"}`), the domains (`repo`, `discussion`) and
  a secret;
- every commit that moves a branch or a pull request's ref (a push through the API, or a test's
  `hub.commit(...)`), every discussion or pull request opened and every comment posted fires a
  version-3 payload (`event{action, scope}`, `repo{type, name, id, private, url, owner,
  headSha}`, `updatedRefs`, `discussion`, `comment`, `webhook{id, version}`) to each webhook
  that watches the repo, its owner or its org, with the domain;
- each delivery is a `POST` with `X-Webhook-Secret` and a `Webhook-Id` that stays the same on
  every retry and on a `replay()` (as the Activity tab's replay); a non-2xx answer (or no
  answer) is retried after `retry_delays_s`, then counted as failed;
- `send(payload)` delivers a payload a test wrote (a lying `headSha`, an unknown scope).

Deliveries go out from one background thread, in order; `wait_idle()` waits for them.
"""

from __future__ import annotations

import hashlib
import json
import queue
import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from tests.support.hub_http import Answer, Request, error, json_answer

if TYPE_CHECKING:
    from tests.support.hub_repo import Discussion, FakeRepo
    from tests.support.hub_server import FakeHub


def object_id(text: str) -> str:
    return hashlib.md5(text.encode()).hexdigest()[:24]


@dataclass
class Webhook:
    id: str
    url: str
    secret: str | None
    watched: list[dict[str, str]]
    domains: list[str]
    disabled: bool = False

    def watches(self, repo: FakeRepo, domain: str) -> bool:
        if self.disabled or domain not in self.domains:
            return False
        for item in self.watched:
            kind, name = item.get("type"), item.get("name")
            if kind == repo.repo_type and name == repo.repo_id:
                return True
            if kind in ("user", "org") and name == repo.namespace:
                return True
        return False

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "url": self.url, "watched": self.watched,
                "domains": self.domains, "secret": self.secret, "disabled": self.disabled,
                "job": None}


@dataclass
class Delivery:
    id: str  # the Webhook-Id: the same on every retry and replay
    webhook: Webhook
    body: bytes
    statuses: list[int | None] = field(default_factory=list)  # per attempt (None: no answer)
    secret: str | None = None  # sent as X-Webhook-Secret (a test may send another)

    @property
    def payload(self) -> dict[str, Any]:
        return dict(json.loads(self.body))

    @property
    def delivered(self) -> bool:
        return any(s is not None and 200 <= s < 300 for s in self.statuses)


class WebhookService:
    def __init__(self, hub: FakeHub, *, retry_delays_s: tuple[float, ...] = (0.05, 0.2, 0.5)
                 ) -> None:
        self.hub = hub
        self.retry_delays_s = retry_delays_s
        self.webhooks: list[Webhook] = []
        self.deliveries: list[Delivery] = []
        self._outbox: queue.Queue[Delivery | None] = queue.Queue()
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._busy = 0
        self._thread: threading.Thread | None = None

    # --- registering ----------------------------------------------------------------------
    def create(self, url: str, *, secret: str | None, watched: list[dict[str, str]],
               domains: list[str] | None = None) -> Webhook:
        hook = Webhook(secrets.token_hex(12), url, secret, list(watched),
                       list(domains or ["repo", "discussion"]))
        with self._lock:
            self.webhooks.append(hook)
        return hook

    def handle(self, req: Request) -> Answer:
        """POST /api/settings/webhooks (HfApi.create_webhook): needs a token."""
        if req.token is None:
            return error(401, None, "You must be authenticated to access this resource")
        body = req.json()
        if not isinstance(body, dict) or not isinstance(body.get("url"), str):
            return error(400, None, "this Hub delivers webhooks to a url only (no jobs)")
        watched = [w for w in body.get("watched") or [] if isinstance(w, dict)]
        hook = self.create(body["url"], secret=body.get("secret"), watched=watched,
                           domains=body.get("domains"))
        return json_answer({"webhook": hook.to_json()})

    # --- events ---------------------------------------------------------------------------
    def repo_json(self, repo: FakeRepo, scope: str) -> dict[str, Any]:
        base = self.hub.url
        out: dict[str, Any] = {
            "type": repo.repo_type, "name": repo.repo_id, "id": object_id(repo.repo_id),
            "private": repo.private, "owner": {"id": object_id(repo.namespace)},
            "url": {"web": f"{base}/{repo.url_path}",
                    "api": f"{base}/api/{repo.repo_type}s/{repo.repo_id}"}}
        if scope.startswith("repo"):
            out["headSha"] = repo.branches.get("main")
        return out

    def payload(self, hook: Webhook, repo: FakeRepo, scope: str, action: str,
                **extra: Any) -> dict[str, Any]:
        return {"event": {"action": action, "scope": scope},
                "repo": self.repo_json(repo, scope), **extra,
                "webhook": {"id": hook.id, "version": 3}}

    def fire(self, repo: FakeRepo, domain: str, scope: str, action: str, **extra: Any
             ) -> list[Delivery]:
        with self._lock:
            hooks = [h for h in self.webhooks if h.watches(repo, domain)]
        return [self.send(self.payload(h, repo, scope, action, **extra), h) for h in hooks]

    def ref_moved(self, repo: FakeRepo, ref: str, old: str | None, new: str | None) -> None:
        self.fire(repo, "repo", "repo.content", "update",
                  updatedRefs=[{"ref": ref, "oldSha": old, "newSha": new}])

    def discussion_json(self, repo: FakeRepo, d: Discussion) -> dict[str, Any]:
        return {"id": object_id(f"{repo.repo_id}#{d.num}"), "num": d.num, "title": d.title,
                "url": {"web": f"{self.hub.url}/{repo.url_path}/discussions/{d.num}"},
                "status": d.status, "isPullRequest": d.is_pull_request,
                "author": {"id": object_id(d.author)},
                "changes": {"base": d.base} if d.is_pull_request else {}}

    def discussion_event(self, repo: FakeRepo, d: Discussion, action: str) -> None:
        self.fire(repo, "discussion", "discussion", action,
                  discussion=self.discussion_json(repo, d))

    def comment_event(self, repo: FakeRepo, d: Discussion, comment: dict[str, Any],
                      action: str = "create") -> None:
        self.fire(repo, "discussion", "discussion.comment", action,
                  discussion=self.discussion_json(repo, d),
                  comment={"id": comment["id"], "author": {"id": object_id(comment["author"])},
                           "content": comment["content"], "hidden": False,
                           "url": {"web": f"{self.hub.url}/{repo.url_path}/discussions/"
                                          f"{d.num}#{comment['id']}"}})

    # --- delivering -----------------------------------------------------------------------
    def send(self, payload: dict[str, Any] | bytes, hook: Webhook | None = None, *,
             delivery_id: str | None = None, secret: str | None = None) -> Delivery:
        """Queue one delivery (to `hook`, default the first webhook) and return it."""
        target = hook or self.webhooks[0]
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        item = Delivery(delivery_id or secrets.token_hex(12), target, body,
                        secret=target.secret if secret is None else secret)
        with self._lock:
            self.deliveries.append(item)
        self._enqueue(item)
        return item

    def replay(self, delivery: Delivery) -> None:
        """Send the same delivery again, same Webhook-Id and body (the Activity tab)."""
        self._enqueue(delivery)

    def _enqueue(self, item: Delivery) -> None:
        with self._lock:
            self._busy += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="fake-hub-webhooks",
                                                daemon=True)
                self._thread.start()
        self._outbox.put(item)

    def wait_idle(self, timeout_s: float = 30.0) -> bool:
        with self._idle:
            return self._idle.wait_for(lambda: self._busy == 0, timeout_s)

    def shutdown(self) -> None:
        if self._thread is not None:
            self._outbox.put(None)

    def _run(self) -> None:
        with httpx.Client(timeout=10.0) as client:
            while True:
                item = self._outbox.get()
                if item is None:
                    return
                try:
                    self._deliver(client, item)
                finally:
                    with self._idle:
                        self._busy -= 1
                        self._idle.notify_all()

    def _deliver(self, client: httpx.Client, item: Delivery) -> None:
        headers = {"Content-Type": "application/json", "Webhook-Id": item.id,
                   "User-Agent": "fake-hub-webhooks"}
        if item.secret is not None:
            headers["X-Webhook-Secret"] = item.secret
        for delay in (0.0, *self.retry_delays_s):
            if self.hub.stopping.wait(delay):
                return
            try:
                status: int | None = client.post(item.webhook.url, content=item.body,
                                                  headers=headers).status_code
            except httpx.HTTPError:
                status = None
            item.statuses.append(status)
            if status is not None and 200 <= status < 300:
                return
