"""A small fake OpenAI-compatible server (stdlib only) for the runtime-gate tests.

Run it with `with FakeOpenAI(model_id="x") as fake: fake.base_url`. By default every route
answers correctly, so every runtime gate passes; its SSE stream deliberately exercises what a
robust reader must handle (a `: ping` comment, CRLF line endings, an event split across network
writes, a multi-line `data:` event, a role chunk with empty content, a usage-only chunk).

Fault modes (names in `FAULTS`, set at construction or by assigning `fake.faults`):
- `drop_mid_stream`: the stream's connection closes after one content chunk (no final chunk);
- `malformed_sse`: one stream event carries broken JSON;
- `missing_done`: the stream ends cleanly without `data: [DONE]`;
- `role_after_content`: the stream sends content before the role delta;
- `wrong_models`: /v1/models lists other ids only;
- `http_500`: every POST answers 500;
- `echo_headers`: error bodies echo the request headers (a leaky server: tests scrubbing);
- `slow_first_byte`: POSTs wait `slow_s` before answering anything;
- `huge_body`: the non-streamed chat answer is `huge_bytes` long;
- `unknown_model_accepted`: any model id is served;
- `nondeterministic`: every answer's text differs;
- `over_max_tokens`: usage.completion_tokens reports max_tokens + 3;
- `responses_404`: /v1/responses is not there (like llama-cpp-python's server);
- `answers_as_other_model`: the chat answer's `model` is `OTHER_MODEL`, whatever was asked
  (a server that serves something else under the name asked for);
- `endless_stream`: the stream sends `: ping` keep-alives forever and nothing else (until the
  client hangs up or the server stops).

With `api_key`, requests without `Authorization: Bearer <api_key>` get 401. Every request is
recorded in `fake.requests` (method, path, headers, JSON body).
"""

from __future__ import annotations

import itertools
import json
import socket
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULTS = frozenset({
    "drop_mid_stream", "malformed_sse", "missing_done", "role_after_content", "wrong_models",
    "http_500", "echo_headers", "slow_first_byte", "huge_body", "unknown_model_accepted",
    "nondeterministic", "over_max_tokens", "responses_404", "endless_stream",
    "answers_as_other_model",
})
OTHER_MODEL = "someone/else-model"
REPLY_TOKENS = ("Ok", ".", " This", " is", " the", " fake", " server", ".")


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: Any = None


@dataclass
class FakeOpenAI:
    model_id: str = "meshcert/fake-model"
    faults: Iterable[str] = ()
    api_key: str | None = None
    line_ending: str = "\r\n"
    token_delay_s: float = 0.002
    slow_s: float = 5.0
    huge_bytes: int = 9 * 1024 * 1024
    requests: list[RecordedRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.faults = set(self.faults)
        unknown = self.faults - FAULTS
        if unknown:
            raise ValueError(f"unknown fault(s): {sorted(unknown)}")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._counter = itertools.count(1)
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> FakeOpenAI:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={
            "poll_interval": 0.05}, name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "not started"
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def has(self, fault: str) -> bool:
        return fault in set(self.faults)

    def record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.requests.append(request)

    def next_number(self) -> int:
        with self._lock:
            return next(self._counter)

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def wait_or_stop(self, seconds: float) -> None:
        self._stop.wait(seconds)

    def reply_tokens(self, limit: int) -> list[str]:
        tokens = list(REPLY_TOKENS[:max(1, limit)])
        if self.has("nondeterministic"):
            tokens[0] = f"Ok{self.next_number()}"
        return tokens


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a client hanging up (reset, broken pipe) is part of the tests


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeOpenAI/1.0"

    def setup(self) -> None:
        super().setup()
        # headers and body leave in separate writes: without this, Nagle + delayed ACK add
        # ~40 ms to every answer
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def fake(self) -> FakeOpenAI:
        return self.server.fake  # type: ignore[attr-defined]

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        return None  # quiet

    # -- plumbing ---------------------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, extra: bytes = b"") -> None:
        data = json.dumps(payload).encode() + extra
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        try:
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _error(self, status: int, message: str, code: str | None = None) -> None:
        error: dict[str, Any] = {}
        if self.fake.has("echo_headers"):  # first, so that it shows in a clipped snippet
            error["request_headers"] = dict(self.headers.items())
        error |= {"message": message, "type": "invalid_request_error", "code": code}
        self._send_json(status, {"error": error})

    def _authorized(self) -> bool:
        key = self.fake.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "invalid API key", "invalid_api_key")
        return False

    def _read_body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            return json.loads(raw) if raw else None
        except ValueError:
            return None

    def _record(self, body: Any) -> None:
        self.fake.record(RecordedRequest(self.command, self.path,
                                         {k.lower(): v for k, v in self.headers.items()}, body))

    # -- routes -----------------------------------------------------------------------------
    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        self._record(None)
        if not self._authorized():
            return
        if self.path.rstrip("/") != "/v1/models":
            self._error(404, f"no route {self.path}")
            return
        ids = ["someone/else-model"] if self.fake.has("wrong_models") else [self.fake.model_id]
        self._send_json(200, {"object": "list", "data": [
            {"id": i, "object": "model", "created": 0, "owned_by": "fake"} for i in ids]})

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        body = self._read_body()
        self._record(body)
        if not self._authorized():
            return
        if self.fake.has("slow_first_byte"):
            self.fake.wait_or_stop(self.fake.slow_s)
        if self.fake.has("http_500"):
            self._error(500, "the fake server is broken on purpose", "internal_error")
            return
        if not isinstance(body, dict):
            self._error(400, "body must be a JSON object")
            return
        path = self.path.rstrip("/")
        if path == "/v1/chat/completions":
            self._chat(body)
        elif path == "/v1/responses" and not self.fake.has("responses_404"):
            self._responses(body)
        else:
            self._error(404, f"no route {self.path}")

    def _model_ok(self, body: dict[str, Any]) -> bool:
        if body.get("model") == self.fake.model_id or self.fake.has("unknown_model_accepted"):
            return True
        self._error(404, f"The model {body.get('model')!r} does not exist", "model_not_found")
        return False

    def _limit(self, body: dict[str, Any], key: str) -> int:
        value = body.get(key)
        return value if isinstance(value, int) and value > 0 else 16

    def _usage(self, tokens: list[str], limit: int) -> dict[str, int]:
        completion = limit + 3 if self.fake.has("over_max_tokens") else len(tokens)
        return {"prompt_tokens": 5, "completion_tokens": completion,
                "total_tokens": 5 + completion}

    def _chat(self, body: dict[str, Any]) -> None:
        if not self._model_ok(body):
            return
        limit = self._limit(body, "max_tokens")
        tokens = self.fake.reply_tokens(limit)
        finish = "length" if len(tokens) < len(REPLY_TOKENS) else "stop"
        if body.get("stream") is True:
            self._stream(body, tokens, finish, limit)
            return
        payload = {
            "id": f"chatcmpl-fake{self.fake.next_number()}", "object": "chat.completion",
            "created": int(time.time()),
            "model": OTHER_MODEL if self.fake.has("answers_as_other_model") else body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant",
                                                 "content": "".join(tokens)},
                         "finish_reason": finish}],
            "usage": self._usage(tokens, limit),
        }
        if self.fake.has("huge_body"):
            payload["padding"] = "x" * self.fake.huge_bytes
        self._send_json(200, payload)

    def _responses(self, body: dict[str, Any]) -> None:
        if not self._model_ok(body):
            return
        limit = self._limit(body, "max_output_tokens")
        tokens = self.fake.reply_tokens(limit)
        n = self.fake.next_number()
        self._send_json(200, {
            "id": f"resp_fake{n}", "object": "response", "status": "completed",
            "model": body["model"],
            "output": [{"type": "message", "id": f"msg_fake{n}", "role": "assistant",
                        "status": "completed",
                        "content": [{"type": "output_text", "text": "".join(tokens),
                                     "annotations": []}]}],
            "usage": {"input_tokens": 5, "output_tokens": len(tokens), "total_tokens": 5 + len(
                tokens)},
        })

    # -- streaming --------------------------------------------------------------------------
    def _chunk(self, data: bytes) -> None:
        """One HTTP/1.1 chunk, flushed (so it leaves as its own network write)."""
        if data:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()

    def _stream(self, body: dict[str, Any], tokens: list[str], finish: str, limit: int) -> None:
        fake = self.fake
        le = fake.line_ending
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk_id = f"chatcmpl-fake{fake.next_number()}"
        base = {"id": chunk_id, "object": "chat.completion.chunk", "created": int(time.time()),
                "model": body["model"]}

        def event(delta: dict[str, Any], finish_reason: str | None = None) -> str:
            obj = base | {"choices": [{"index": 0, "delta": delta,
                                       "finish_reason": finish_reason}]}
            return f"data: {json.dumps(obj)}{le}{le}"

        role = event({"role": "assistant", "content": ""})
        contents = [event({"content": t}) for t in tokens]
        if fake.has("role_after_content"):
            contents.insert(1, event({"role": "assistant"}))
            role = ""
        try:
            self._chunk(f": ping{le}{le}".encode())
            while fake.has("endless_stream") and not fake.stopping:
                fake.wait_or_stop(0.02)
                self._chunk(f": ping{le}{le}".encode())
            self._chunk(role.encode())
            for i, text in enumerate(contents):
                time.sleep(fake.token_delay_s)
                if i == 0:
                    # a multi-line data event (the JSON split over two data: lines), written in
                    # two network writes that split a line in the middle
                    obj = json.loads(text[len("data: "):].strip())
                    head = json.dumps({k: v for k, v in obj.items() if k != "choices"})[:-1]
                    tail = '"choices": ' + json.dumps(obj["choices"]) + "}"
                    multi = f"data: {head},{le}data: {tail}{le}{le}".encode()
                    self._chunk(multi[:10])
                    time.sleep(0.001)
                    self._chunk(multi[10:])
                else:
                    self._chunk(text.encode())
                if i == 0 and fake.has("drop_mid_stream"):
                    self.close_connection = True
                    return  # no terminating chunk: the client sees a truncated body
                if i == 0 and fake.has("malformed_sse"):
                    self._chunk(f'data: {{"id": "{chunk_id}", "choices": [{le}{le}'.encode())
                self._chunk(f": keep-alive{le}{le}".encode())
            self._chunk(event({}, finish).encode())
            options = body.get("stream_options")
            if isinstance(options, dict) and options.get("include_usage"):
                usage = base | {"choices": [], "usage": self._usage(tokens, limit)}
                self._chunk(f"data: {json.dumps(usage)}{le}{le}".encode())
            if not fake.has("missing_done"):
                self._chunk(f"data: [DONE]{le}{le}".encode())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


def main() -> None:
    """`python -m tests.support.fake_openai [faults...]`: serve until stdin closes (for
    benchmarks that want the server out of the client's process)."""
    import sys

    with FakeOpenAI(faults=sys.argv[1:]) as fake:
        print(f"{fake.base_url} {fake.model_id}", flush=True)
        sys.stdin.read()


if __name__ == "__main__":
    main()
