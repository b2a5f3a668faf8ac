"""The ASGI app (Starlette): `POST /webhook`, `GET /healthz`, `GET /status`.

`/webhook` answers within milliseconds and only queues: the secret compared in constant time
(header `X-Webhook-Secret` or `?secret=`; missing 401, wrong 403, nothing read or queued), the
body capped (413), a body that is not a JSON object 400 (the Hub always sends one), and then
2xx for everything else: an event acted on (202, its tasks queued), an unknown scope, action,
version or an unwatched repo (200, ignored and logged), a replayed `Webhook-Id` (200, nothing
queued). The secret and the query string are in no log line and no answer.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import sqlite3
from collections.abc import AsyncIterator
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.serve.payload import Ignored, PayloadError, parse
from meshcert.serve.queue import Accepted, QueueClosed
from meshcert.serve.routing import TaskSpec, tasks_for
from meshcert.serve.service import Service
from meshcert.serve.status_page import render_status, status_data

log = logging.getLogger("meshcert.serve")


class TooLarge(MeshcertError):
    """The body is over the cap (answered 413)."""

    kind = ErrorKind.USAGE


async def _body(request: Request, cap: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise TooLarge
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > cap:
            raise TooLarge
    return bytes(body)


def _authorized(request: Request, secret: str) -> Response | None:
    supplied = request.headers.get("x-webhook-secret")
    if supplied is None:
        supplied = request.query_params.get("secret")
    if supplied is None:
        log.warning("webhook refused: no secret (401)")
        return JSONResponse({"error": "missing X-Webhook-Secret"}, 401)
    if not hmac.compare_digest(supplied.encode("utf-8", "replace"), secret.encode()):
        log.warning("webhook refused: wrong secret (403)")
        return JSONResponse({"error": "wrong secret"}, 403)
    return None


def build_app(service: Service) -> Starlette:
    cap = service.config.webhook.max_body_bytes
    recorder = Recorder(service)

    def _route(delivery: str, body: bytes) -> list[TaskSpec] | Ignored | Response:
        try:
            event = parse(body)
        except PayloadError as exc:
            log.warning("delivery %s refused: %s (400)", delivery, exc)
            return JSONResponse({"error": str(exc)}, 400)
        return event if isinstance(event, Ignored) else tasks_for(event, service.config)

    async def webhook(request: Request) -> Response:
        refused = _authorized(request, service.secret)
        if refused is not None:
            return refused
        try:
            body = await _body(request, cap)
        except TooLarge:
            log.warning("webhook refused: body over %d bytes (413)", cap)
            return JSONResponse({"error": f"body over {cap} bytes"}, 413)
        digest = hashlib.sha256(body).hexdigest()
        delivery = (request.headers.get("webhook-id") or f"sha256:{digest}")[:200]
        routed = _route(delivery, body)
        if isinstance(routed, Response):
            return routed
        try:
            seen = await recorder.record(delivery, routed, digest)
        except (QueueClosed, sqlite3.Error) as exc:  # stopping, or the disk failed us
            log.error("delivery %s not recorded (503): %s", delivery, exc)
            return JSONResponse({"error": "not recorded; deliver again"}, 503)
        return _answer(service, seen, routed)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"ok": True})

    async def status(request: Request) -> Response:
        data = status_data(service)
        wants_json = request.query_params.get("format") == "json" or (
            "application/json" in request.headers.get("accept", "")
            and "text/html" not in request.headers.get("accept", ""))
        if wants_json:
            return JSONResponse(data)
        return HTMLResponse(render_status(data))

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        service.start()
        try:
            yield
        finally:  # uvicorn's SIGTERM: drain, requeue what is still running
            service.stop()

    return Starlette(routes=[
        Route("/webhook", webhook, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/status", status, methods=["GET"]),
    ], lifespan=lifespan)


class Recorder:
    """Group commit: the deliveries that arrive in one turn of the event loop are recorded in
    one SQLite transaction, and each is answered only after that transaction committed (a
    2xx still means "recorded"). Under a burst this writes the WAL once per batch instead of
    once per delivery; alone, a delivery waits for nothing."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._batch: list[tuple[str, list[TaskSpec], str, str, asyncio.Future[Accepted]]] = []

    async def record(self, delivery: str, routed: list[TaskSpec] | Ignored, digest: str
                     ) -> Accepted:
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Accepted] = loop.create_future()
        specs, outcome = ([], f"ignored: {routed.reason}") if isinstance(routed, Ignored) \
            else (routed, "queued")
        if not self._batch:  # the first of a batch: commit after the others ready now
            loop.call_soon(self._commit)
        self._batch.append((delivery, specs, outcome, digest, done))
        return await done

    def _commit(self) -> None:
        batch, self._batch = self._batch, []
        try:
            results = self.service.queue.accept_many([item[:4] for item in batch])
        except Exception as exc:  # noqa: BLE001  (each waiting delivery answers for itself)
            for item in batch:
                if not item[4].done():
                    item[4].set_exception(exc)
            return
        for item, accepted in zip(batch, results, strict=True):
            if not item[4].done():  # its sender may have gone; the delivery is recorded
                item[4].set_result(accepted)
        if any(r.queued for r in results):
            self.service.workers.wake()


def _altered(seen: Accepted) -> None:
    if seen.altered:  # the Hub sends a delivery's body again as it was: someone else did this
        log.warning("delivery %s replayed with another body: nothing queued (the Hub never "
                    "does this; a request forged with a known Webhook-Id?)", seen.delivery)


def _answer(service: Service, seen: Accepted, routed: list[TaskSpec] | Ignored) -> Response:
    delivery = seen.delivery
    _altered(seen)
    if isinstance(routed, Ignored):
        log.info("delivery %s ignored%s: %s", delivery, " (replay)" if seen.replay else "",
                 routed.reason)
        return JSONResponse({"delivery": delivery, "ignored": routed.reason,
                             "replay": seen.replay}, 200)
    if seen.replay:
        log.info("delivery %s is a replay: nothing queued", delivery)
        return JSONResponse({"delivery": delivery, "replay": True, "queued": 0}, 200)
    what: list[dict[str, Any]] = [{"kind": t.kind, "repo": t.repo, "ref": t.ref}
                                  for t in routed]
    log.info("delivery %s: %d task(s) queued (%s), %d superseded", delivery, seen.queued,
             ", ".join(f"{t.kind} {t.repo} {t.ref}" for t in routed), seen.superseded)
    return JSONResponse({"delivery": delivery, "replay": False, "queued": seen.queued,
                         "tasks": what}, 202)
