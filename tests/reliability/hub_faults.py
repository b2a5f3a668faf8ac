"""The fake Hub plus the answer mutations the Hub fault matrix needs and FakeHub lacks.

FakeHub (tests/support/hub_server.py) injects whole answers (a status, a dropped connection,
a body cut in half, a delay). The matrix also needs answers that look right but are not:
a Content-Length that disagrees with the body, and range requests answered with the wrong
bytes. `FaultyHub` adds them by wrapping FakeHub's one send path, without changing FakeHub.

    hub.mutate("resolve", "length_short", path_contains="model-package.json")
    hub.mutate("lfs", "range_garbage")
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass
from typing import Any, Literal

from tests.support.hub_server import FakeHub

MutationKind = Literal[
    "length_long",  # Content-Length says more than is sent, then the connection closes
    "length_short",  # Content-Length says half of what the body is; the rest never goes out
    "range_garbage",  # a ranged answer (206) whose bytes are random
    "range_full_garbage",  # a range request answered 200 with a whole body of random bytes
    "range_wrong_start",  # a 206 whose Content-Range starts elsewhere than asked
    "trickle",  # slow loris: headers, then the body one byte every TRICKLE_GAP_S
    "body_garbage",  # any 200 answer's body replaced by random bytes of the same length
]

# A slow loris is slow relative to the client's deadline, never by wall-clock luck: one byte
# per TRICKLE_GAP_S is far below the slowest rate the client accepts (MIN_BYTES_PER_S), and the
# gap is waited on the hub's stop event, a real wait (the fixtures patch time.sleep
# process-wide to record the client's backoff, which made `time.sleep` here a no-op: the
# "trickle" then sent every byte at full speed and a fast machine read it in time). A loaded
# machine can only make the server slower, never the client's budget longer.
TRICKLE_GAP_S = 0.05
TRICKLE_MAX_S = 20.0


@dataclass
class Mutation:
    route: str  # a FakeHub route, or "any"
    kind: MutationKind
    path_contains: str | None = None
    times: int | None = None  # None: forever
    hits: int = 0

    def matches(self, route: str, method: str, path: str, status: int) -> bool:
        if method != "GET" or (self.times is not None and self.hits >= self.times):
            return False
        if self.route not in ("any", route):
            return False
        if self.path_contains is not None and self.path_contains not in path:
            return False
        if self.kind in ("range_garbage", "range_wrong_start"):
            return status == 206
        if self.kind == "range_full_garbage":
            return status in (200, 206)
        return 200 <= status < 300


class FaultyHub(FakeHub):
    """FakeHub with `mutate()`: answers that are well-formed HTTP but carry wrong facts."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mutations: list[Mutation] = []
        self._rng = random.Random(8)  # deterministic garbage
        self._mutation_lock = threading.Lock()

    def mutate(self, route: str, kind: MutationKind, *, path_contains: str | None = None,
               times: int | None = None) -> Mutation:
        mutation = Mutation(route, kind, path_contains, times)
        with self._mutation_lock:
            self.mutations.append(mutation)
        return mutation

    def injected(self) -> int:
        """How many answers were faulted so far (FakeHub faults and mutations)."""
        with self._mutation_lock:
            mutated = sum(m.hits for m in self.mutations)
        return mutated + sum(f.hits for f in self.faults)

    def _garbage(self, n: int) -> bytes:
        with self._mutation_lock:
            return self._rng.randbytes(n)

    def _send(self, handler: Any, method: str, route: str, answer: Any, *,
              truncate: bool) -> None:
        mutation: Mutation | None = None
        with self._mutation_lock:
            for candidate in self.mutations:
                if candidate.matches(route, method, handler.path, answer.status):
                    candidate.hits += 1
                    mutation = candidate
                    break
        closing = False
        if mutation is not None and mutation.kind == "trickle":
            self._trickle(handler, answer)
            return
        if mutation is not None:
            closing = self._apply(mutation, handler, answer)
        super()._send(handler, method, route, answer, truncate=truncate)
        if closing:
            handler.close_connection = True

    def _trickle(self, handler: Any, answer: Any) -> None:
        """Every byte arrives, just never fast: each read finishes well within any per-read
        timeout, so only a whole-request budget can stop the client. Bounded: it gives up
        after TRICKLE_MAX_S, or as soon as the client hangs up."""
        handler.close_connection = True
        started = time.monotonic()
        try:
            handler.send_response(answer.status)
            for name, value in answer.headers.items():
                handler.send_header(name, value)
            if "Content-Length" not in answer.headers:
                handler.send_header("Content-Length", str(len(answer.body)))
            handler.end_headers()
            handler.wfile.flush()
            for i in range(len(answer.body)):
                if time.monotonic() - started > TRICKLE_MAX_S:
                    return
                handler.wfile.write(answer.body[i:i + 1])
                handler.wfile.flush()
                if self._stopping.wait(TRICKLE_GAP_S):
                    return
        except OSError:
            return

    def _apply(self, mutation: Mutation, handler: Any, answer: Any) -> bool:
        """Change `answer` in place; True when the connection must close after it."""
        kind = mutation.kind
        body: bytes = answer.body
        if kind == "length_long":
            answer.headers["Content-Length"] = str(len(body) + 4096)
            answer.headers["Connection"] = "close"
            return True
        if kind == "length_short":
            answer.headers["Content-Length"] = str(len(body) // 2)
            answer.headers["Connection"] = "close"
            return True
        if kind in ("range_garbage", "body_garbage"):
            answer.body = self._garbage(len(body))
            return False
        if kind == "range_full_garbage":
            total = answer.headers.get("Content-Range", "").rpartition("/")[2]
            size = int(total) if total.isdigit() else len(body)
            answer.status = 200
            answer.headers.pop("Content-Range", None)
            answer.body = self._garbage(size)
            return False
        if kind == "trickle":
            return False  # sent by _trickle, not by FakeHub._send
        if kind == "range_wrong_start":
            first, _, rest = answer.headers.get("Content-Range", "bytes 0-0/1").partition("-")
            start = int(first.rpartition(" ")[2] or 0)
            answer.headers["Content-Range"] = f"bytes {start + 1}-{rest}"
            return False
        raise ValueError(f"unknown mutation {kind!r}")
