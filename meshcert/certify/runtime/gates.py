"""The runtime gates: mesh-llm's three, then the extended ones, run against one endpoint.

Each gate is a function `(GateContext) -> RuntimeGate` listed in `GATES`; `run_runtime_gates`
runs them in order under one overall deadline, sets each gate's severity (mesh-llm's three are
`required`; the others `warning`, or `required` with `strict`), contains crashes, and scrubs the
API key out of every string it returns. If `/v1/models` cannot even be connected to, the other
gates are marked `incomplete` at once instead of each waiting on a dead endpoint.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from meshcert.certify.report import REQUESTED_MODEL, SERVED_MODEL, GateStatus, RuntimeGate
from meshcert.certify.runtime.client import (
    DEFAULT_DEADLINE_S,
    DEFAULT_MAX_BODY_BYTES,
    Deadline,
    Exchange,
    OpenStream,
    RuntimeClient,
    TransportFailure,
)
from meshcert.certify.runtime.requests import RuntimeRequest
from meshcert.certify.runtime.rules import (
    chat_texts,
    error_object,
    model_ids,
    responses_texts,
    usage_completion_tokens,
)
from meshcert.certify.runtime.sse import SSEError, SSEParser
from meshcert.certify.runtime.stats import latency_summary, rounded
from meshcert.certify.runtime.stream import StreamChecker, is_event_stream
from meshcert.core.progress import NullProgress, ProgressObserver
from meshcert.core.redact import Redactor

MODELS_PATH = "/v1/models"
CHAT_PATH = "/v1/chat/completions"
RESPONSES_PATH = "/v1/responses"
MESH_GATES = ("v1_models", "v1_chat_completions", "v1_responses")
SNIPPET_CHARS = 200


@dataclass
class GateContext:
    """What the gates share: the request, the client, and answers later gates reuse."""

    runtime: RuntimeRequest
    client: RuntimeClient
    redactor: Redactor
    unreachable: str | None = None  # set when /v1/models could not connect
    chat: Exchange | None = None  # the v1_chat_completions answer
    stream_usage_tokens: int | None = None
    stream_answered: bool = False

    def chat_body(self, *, model: str | None = None, stream: bool = False,
                  **extra: Any) -> dict[str, Any]:
        """mesh-llm's chat request body (same keys, same order), plus `extra`."""
        body: dict[str, Any] = {
            "model": model if model is not None else self.runtime.model_id,
            "messages": [{"role": "user", "content": self.runtime.prompt}],
            "max_tokens": self.runtime.max_tokens,
            "stream": stream,
        }
        return body | extra


GateFunc = Callable[[GateContext], RuntimeGate]


def _gate(name: str, status: GateStatus, details: str | None, exchange: Exchange | None = None,
          **fields: Any) -> RuntimeGate:
    if exchange is not None:
        fields.setdefault("http_status", exchange.status)
        fields.setdefault("latency_ms", exchange.latency_ms)
    return RuntimeGate(name=name, status=status, details=details, **fields)


def _http_problem(ctx: GateContext, name: str, exchange: Exchange, *,
                  expect: Literal["2xx", "200"] = "2xx") -> RuntimeGate | None:
    """The gate's verdict when the exchange itself went wrong (transport or status); None when
    the answer is there to judge."""
    if exchange.failure is not None:
        return _gate(name, exchange.failure.gate_status, exchange.failure.message, exchange)
    status = exchange.status or 0
    good = status == 200 if expect == "200" else 200 <= status < 300
    if not good:
        snippet = exchange.snippet(ctx.redactor.scrub, SNIPPET_CHARS)
        return _gate(name, "failed", f"HTTP {status}: {snippet}" if snippet else
                     f"HTTP {status}", exchange)
    return None


def _json_body(ctx: GateContext, name: str, exchange: Exchange
               ) -> tuple[Any, RuntimeGate | None]:
    body, error = exchange.json()
    if error is not None:
        return None, _gate(name, "failed", f"HTTP {exchange.status} but the body is not "
                           f"JSON ({error}): {exchange.snippet(ctx.redactor.scrub, 80)}",
                           exchange)
    return body, None


def _json_answer(ctx: GateContext, name: str, exchange: Exchange
                 ) -> tuple[Any, RuntimeGate | None]:
    """The JSON body of a 2xx answer, or the gate's verdict when there is none to judge."""
    verdict = _http_problem(ctx, name, exchange)
    if verdict is not None:
        return None, verdict
    return _json_body(ctx, name, exchange)


def _quote(ctx: GateContext, text: str, limit: int = 60) -> str:
    """A model's text for details: scrubbed, then cut."""
    text = ctx.redactor.scrub(text)
    return repr(text if len(text) <= limit else text[:limit] + "...")


# -- mesh-llm's gates ---------------------------------------------------------------------
PROPS_PATH = "/props"  # llama.cpp's server: build and settings


def gate_v1_models(ctx: GateContext) -> RuntimeGate:
    """GET /v1/models: status exactly 200, JSON body, some data[].id equals the model id."""
    name = "v1_models"
    exchange = ctx.client.get(MODELS_PATH)
    if exchange.failure is not None and exchange.failure.kind == "unreachable":
        ctx.unreachable = exchange.failure.message
    verdict = _http_problem(ctx, name, exchange, expect="200")
    if verdict is not None:
        return verdict
    body, verdict = _json_body(ctx, name, exchange)
    if verdict is not None:
        return verdict
    ids = model_ids(body)
    if ids is None:
        return _gate(name, "failed", "HTTP 200 but the body has no data[] list", exchange)
    measures: dict[str, Any] = {"measurements": {"model_count": len(ids)}}
    build = _llama_cpp_build(ctx, body)
    if build is not None:
        measures["measurements"]["server_build"] = build
    if ctx.runtime.model_id not in ids:
        shown = ", ".join(repr(i) for i in ids[:10]) + (" ..." if len(ids) > 10 else "")
        return _gate(name, "failed", f"model id {ctx.runtime.model_id!r} not in data[].id "
                     f"(served: {shown or 'none'})", exchange, **measures)
    return _gate(name, "passed", f"HTTP 200; {len(ids)} model(s) listed", exchange, **measures)


def _llama_cpp_build(ctx: GateContext, models_body: Any) -> str | None:
    """The serving build, recorded with the gate when the endpoint says it is llama.cpp's
    server (`owned_by: llamacpp` in /v1/models): its `GET /props` carries `build_info`
    (e.g. `b11434-...`). One extra request, only then; never part of a verdict."""
    data = models_body.get("data") if isinstance(models_body, dict) else None
    if not isinstance(data, list) or not any(
            isinstance(m, dict) and m.get("owned_by") == "llamacpp" for m in data):
        return None
    exchange = ctx.client.get(PROPS_PATH)
    if not exchange.ok_2xx:
        return None
    props, problem = exchange.json()
    build = props.get("build_info") if problem is None and isinstance(props, dict) else None
    return ctx.redactor(build)[:120] if isinstance(build, str) and build.strip() else None


def gate_v1_chat_completions(ctx: GateContext) -> RuntimeGate:
    """POST /v1/chat/completions (not streamed): any 2xx and a non-blank message content."""
    name = "v1_chat_completions"
    exchange = ctx.client.post(CHAT_PATH, ctx.chat_body())
    ctx.chat = exchange
    body, verdict = _json_answer(ctx, name, exchange)
    if verdict is not None:  # no answer to name a model, but the model asked for is known
        return verdict.model_copy(update={"measurements": {
            **verdict.measurements, REQUESTED_MODEL: ctx.runtime.model_id}})
    tokens = usage_completion_tokens(body)
    texts = chat_texts(body)
    served = body.get("model") if isinstance(body, dict) else None
    measures = {"measurements": {REQUESTED_MODEL: ctx.runtime.model_id, SERVED_MODEL: (
        ctx.redactor(served)[:200] if isinstance(served, str) and served else None)}}
    if not texts:
        return _gate(name, "failed", f"HTTP {exchange.status} but no non-blank "
                     "choices[].message.content", exchange, completion_tokens=tokens,
                     **measures)
    return _gate(name, "passed", f"HTTP {exchange.status}; content {_quote(ctx, texts[0])}",
                 exchange, completion_tokens=tokens, **measures)


def gate_v1_responses(ctx: GateContext) -> RuntimeGate:
    """POST /v1/responses: any 2xx and a non-blank output text."""
    name = "v1_responses"
    body_out = {"model": ctx.runtime.model_id, "input": ctx.runtime.prompt,
                "max_output_tokens": ctx.runtime.max_tokens}
    exchange = ctx.client.post(RESPONSES_PATH, body_out)
    body, verdict = _json_answer(ctx, name, exchange)
    if verdict is not None:
        return verdict
    texts = responses_texts(body)
    if not texts:
        return _gate(name, "failed", f"HTTP {exchange.status} but no non-blank output_text "
                     "nor output[].content[] part of type output_text", exchange)
    return _gate(name, "passed", f"HTTP {exchange.status}; output {_quote(ctx, texts[0])}",
                 exchange)


# -- extended gates -------------------------------------------------------------------------
def gate_chat_stream(ctx: GateContext) -> RuntimeGate:
    """Streamed chat completion: the SSE rules of the spec, TTFT, inter-token latency."""
    name = "v1_chat_completions_stream"
    body = ctx.chat_body(stream=True, stream_options={"include_usage": True})
    started = time.perf_counter()
    status: int | None = None
    try:
        with ctx.client.open("POST", CHAT_PATH, body, accept="text/event-stream") as opened:
            started = opened.started
            status = opened.status
            if not 200 <= status < 300:
                exchange = _drain(opened)
                return _http_problem(ctx, name, exchange) or _gate(name, "failed",
                                                                   f"HTTP {status}", exchange)
            if not is_event_stream(opened.content_type):
                return _gate(name, "failed", f"HTTP {status} with content-type "
                             f"{opened.content_type or 'none'!r}, expected text/event-stream",
                             http_status=status,
                             latency_ms=rounded((time.perf_counter() - started) * 1000))
            ctx.stream_answered = True
            checker = StreamChecker(started=started, scrub=ctx.redactor.scrub)
            transport_problem, failed_status = _read_stream(opened, checker)
    except TransportFailure as failure:
        return _gate(name, failure.failure.gate_status, failure.failure.message,
                     http_status=status,
                     latency_ms=rounded((time.perf_counter() - started) * 1000))
    latency_ms = rounded((time.perf_counter() - started) * 1000)
    ctx.stream_usage_tokens = checker.usage_tokens
    problems = checker.finish(transport_problem=transport_problem)
    if problems:
        # a rule already broken fails the gate even if the stream then timed out
        gate_status: GateStatus = "failed" if checker.problems else (failed_status or "failed")
        details = "; ".join(problems)
    else:
        gate_status = "passed"
        details = (f"HTTP {status}; {checker.events} event(s), content "
                   f"{_quote(ctx, checker.text)}")
    return _gate(name, gate_status, details, http_status=status, latency_ms=latency_ms,
                 ttft_ms=checker.ttft_ms, completion_tokens=checker.completion_tokens,
                 tokens_per_s=checker.tokens_per_s, measurements=checker.measurements())


def _drain(opened: OpenStream) -> Exchange:
    """Read an error answer's body (bounded) into an Exchange."""
    exchange = Exchange(method="POST", path=CHAT_PATH, status=opened.status,
                        content_type=opened.content_type)
    parts: list[bytes] = []
    try:
        for chunk, _ in opened.chunks():
            parts.append(chunk)
    except TransportFailure as failure:
        exchange.failure = failure.failure
    exchange.body = b"".join(parts)
    exchange.latency_ms = rounded((time.perf_counter() - opened.started) * 1000)
    return exchange


def _read_stream(opened: OpenStream, checker: StreamChecker
                 ) -> tuple[str | None, Literal["failed", "incomplete"] | None]:
    """Parse and check events until [DONE] or the end; (transport problem, status it means)."""
    parser = SSEParser()
    try:
        for chunk, arrived in opened.chunks():
            for event in parser.feed(chunk, arrived):
                if checker.feed(event):
                    return None, None
        for event in parser.finish(time.perf_counter()):
            if checker.feed(event):
                return None, None
    except TransportFailure as failure:
        return failure.failure.message, failure.failure.gate_status
    except SSEError as exc:
        return f"malformed event stream: {exc}", "failed"
    return None, None


def gate_max_tokens(ctx: GateContext) -> RuntimeGate:
    """usage.completion_tokens <= max_tokens wherever usage is given (the non-streamed chat
    answer and the stream's usage chunk are reused: no extra request)."""
    name = "max_tokens_respected"
    limit = ctx.runtime.max_tokens
    seen: dict[str, int] = {}
    answered = False
    if ctx.chat is not None and ctx.chat.ok_2xx:
        body, error = ctx.chat.json()
        if error is None:
            answered = True
            tokens = usage_completion_tokens(body)
            if tokens is not None:
                seen["chat"] = tokens
    if ctx.stream_answered:
        answered = True
        if ctx.stream_usage_tokens is not None:
            seen["stream"] = ctx.stream_usage_tokens
    measures: dict[str, float | int | str | None] = {"max_tokens": limit}
    measures |= {f"{k}_completion_tokens": v for k, v in seen.items()}
    worst = max(seen.values()) if seen else None
    if not answered:
        return _gate(name, "incomplete", "no successful chat completion to read usage from",
                     measurements=measures)
    if worst is None:
        return _gate(name, "passed", "usage not reported; nothing to check",
                     measurements=measures)
    over = {k: v for k, v in seen.items() if v > limit}
    if over:
        said = ", ".join(f"{k}: {v}" for k, v in over.items())
        return _gate(name, "failed", f"usage.completion_tokens exceeds max_tokens {limit} "
                     f"({said})", completion_tokens=worst, measurements=measures)
    return _gate(name, "passed", f"usage.completion_tokens {worst} <= max_tokens {limit}",
                 completion_tokens=worst, measurements=measures)


def gate_deterministic(ctx: GateContext) -> RuntimeGate:
    """Two identical requests at temperature 0 give the same text."""
    name = "deterministic_at_temperature_0"
    body = ctx.chat_body(temperature=0)
    texts: list[list[str]] = []
    latencies: list[float] = []
    last: Exchange | None = None
    for _ in range(2):
        exchange = ctx.client.post(CHAT_PATH, body)
        last = exchange
        decoded, verdict = _json_answer(ctx, name, exchange)
        if verdict is not None:
            return verdict
        texts.append(chat_texts(decoded))
        latencies.append(exchange.latency_ms or 0.0)
    measures = {"measurements": {"first_latency_ms": latencies[0],
                                 "second_latency_ms": latencies[1]}}
    latency = rounded(sum(latencies) / 2)
    if not texts[0] and not texts[1]:
        return _gate(name, "failed", "no non-blank content to compare", last,
                     latency_ms=latency, **measures)
    if texts[0] != texts[1]:
        first, second = "".join(texts[0]), "".join(texts[1])
        return _gate(name, "failed", f"texts differ: {_quote(ctx, first)} vs {_quote(ctx, second)}",
                     last, latency_ms=latency, **measures)
    return _gate(name, "passed", f"same text twice: {_quote(ctx, ''.join(texts[0]))}", last,
                 latency_ms=latency, **measures)


def gate_unknown_model(ctx: GateContext) -> RuntimeGate:
    """A bogus model id gets a 4xx with a JSON `error` object."""
    name = "unknown_model_rejected"
    bogus = f"meshcert-unknown-model-{uuid.uuid4().hex[:12]}"
    exchange = ctx.client.post(CHAT_PATH, ctx.chat_body(model=bogus))
    measures = {"measurements": {"model": bogus}}
    if exchange.failure is not None:
        return _gate(name, exchange.failure.gate_status, exchange.failure.message, exchange,
                     **measures)
    status = exchange.status or 0
    snippet = exchange.snippet(ctx.redactor.scrub, 120)
    if 200 <= status < 300:
        return _gate(name, "failed", f"HTTP {status}: unknown model id {bogus!r} was "
                     "accepted", exchange, **measures)
    if not 400 <= status < 500:
        return _gate(name, "failed", f"HTTP {status} (expected a 4xx): {snippet}", exchange,
                     **measures)
    body, _ = exchange.json()
    if error_object(body) is None:
        return _gate(name, "failed", f"HTTP {status} without a JSON error object: {snippet}",
                     exchange, **measures)
    return _gate(name, "passed", f"HTTP {status} with an error object", exchange, **measures)


def gate_concurrent(ctx: GateContext) -> RuntimeGate:
    """N parallel non-streamed chat requests all succeed; latency percentiles."""
    name = "concurrent_requests"
    n = max(1, ctx.runtime.concurrency)
    body = ctx.chat_body()

    def one(_: int) -> tuple[Exchange, str | None]:
        exchange = ctx.client.post(CHAT_PATH, body)
        if exchange.failure is not None:
            return exchange, exchange.failure.message
        if not exchange.ok_2xx:
            return exchange, f"HTTP {exchange.status}"
        decoded, error = exchange.json()
        if error is not None:
            return exchange, "body is not JSON"
        return exchange, None if chat_texts(decoded) else "no non-blank content"

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=n, thread_name_prefix="meshcert-concurrent") as pool:
        results = list(pool.map(one, range(n)))
    wall_ms = rounded((time.perf_counter() - started) * 1000)
    latencies = [e.latency_ms for e, _ in results if e.latency_ms is not None]
    failures = [(e, why) for e, why in results if why is not None]
    answered_bad = [why for e, why in failures if e.failure is None
                    or e.failure.gate_status == "failed"]
    summary = latency_summary(latencies, "latency")
    measures: dict[str, float | int | str | None] = {
        "requests": n, "failures": len(failures), "wall_ms": wall_ms,
        "p50_ms": summary["latency_p50_ms"], "p95_ms": summary["latency_p95_ms"],
        "max_ms": summary["latency_max_ms"], "mean_ms": summary["latency_mean_ms"],
    }
    statuses = sorted({e.status for e, _ in results if e.status is not None})
    http_status = statuses[0] if len(statuses) == 1 else None
    if not failures:
        return _gate(name, "passed", f"{n}/{n} parallel requests succeeded",
                     http_status=http_status, latency_ms=wall_ms, measurements=measures)
    reasons = sorted({why for _, why in failures if why})
    details = (f"{len(failures)}/{n} parallel requests failed: "
               + "; ".join(reasons[:3]) + (" ..." if len(reasons) > 3 else ""))
    status: GateStatus = "failed" if answered_bad else "incomplete"
    return _gate(name, status, details, http_status=http_status, latency_ms=wall_ms,
                 measurements=measures)


GATES: tuple[tuple[str, GateFunc], ...] = (
    ("v1_models", gate_v1_models),
    ("v1_chat_completions", gate_v1_chat_completions),
    ("v1_responses", gate_v1_responses),
    ("v1_chat_completions_stream", gate_chat_stream),
    ("max_tokens_respected", gate_max_tokens),
    ("deterministic_at_temperature_0", gate_deterministic),
    ("unknown_model_rejected", gate_unknown_model),
    ("concurrent_requests", gate_concurrent),
)


def _severity(name: str, strict: bool) -> Literal["required", "warning"]:
    return "required" if name in MESH_GATES or strict else "warning"


def api_key_problem(api_key: str | None) -> str | None:
    """Why the key cannot go into an HTTP header, if it cannot (the key itself is not named)."""
    if api_key is None:
        return None
    if not api_key.isascii() or not api_key.isprintable() or any(c.isspace() for c in api_key):
        return "the API key is not a valid header value (printable ASCII, no spaces expected)"
    return None


def api_base_problem(api_base: str) -> str | None:
    """Credentials in the URL would go out as Basic auth; the key goes as Bearer only."""
    try:
        url = httpx.URL(api_base)
    except httpx.InvalidURL:
        return "the API base is not a valid URL"
    if url.userinfo:
        return "credentials in the API base URL are not sent; give the key as the API key"
    return None


def _scrubbed(gate: RuntimeGate, redactor: Redactor) -> RuntimeGate:
    measurements = {k: redactor.scrub(v) if isinstance(v, str) else v
                    for k, v in gate.measurements.items()}
    return gate.model_copy(update={"details": redactor.scrub_optional(gate.details),
                                   "measurements": measurements})


def run_runtime_gates(
    runtime: RuntimeRequest,
    progress: ProgressObserver | None = None,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    transport: Any = None,
) -> list[RuntimeGate]:
    """Run every gate against `runtime.api_base`; always returns one gate per entry of GATES.

    `transport` (an httpx transport) is for callers that want to swap the I/O layer."""
    progress = progress or NullProgress()
    redactor = Redactor(runtime.api_key)
    deadline = Deadline(runtime.deadline_s if runtime.deadline_s is not None
                        else DEFAULT_DEADLINE_S)
    gates: list[RuntimeGate] = []
    skip = api_key_problem(runtime.api_key) or api_base_problem(runtime.api_base)
    progress.begin("runtime gates", len(GATES))
    try:
        base = "http://invalid.invalid" if skip else runtime.api_base  # never contacted then
        with RuntimeClient(base, api_key=None if skip else runtime.api_key,
                           timeout_s=runtime.timeout_s, deadline=deadline, redactor=redactor,
                           max_body_bytes=max_body_bytes,
                           max_connections=max(4, runtime.concurrency + 2),
                           transport=transport) as client:
            ctx = GateContext(runtime=runtime, client=client, redactor=redactor)
            for name, func in GATES:
                if skip is not None:
                    gate = RuntimeGate(name=name, status="incomplete", details=f"not run: {skip}")
                elif deadline.expired:
                    gate = RuntimeGate(name=name, status="incomplete", details=(
                        f"not run: overall deadline of {deadline.seconds:g} s reached"))
                else:
                    gate = _contained(name, func, ctx)
                    if name == "v1_models" and ctx.unreachable is not None:
                        skip = f"endpoint unreachable ({ctx.unreachable})"
                gate = gate.model_copy(update={"severity": _severity(name, runtime.strict)})
                gates.append(_scrubbed(gate, redactor))
                progress.advance(1)
    finally:
        progress.end()
    return gates


def _contained(name: str, func: GateFunc, ctx: GateContext) -> RuntimeGate:
    """Run one gate; a crash makes it incomplete (never passed) with the error named."""
    try:
        return func(ctx)
    except Exception as exc:  # containment, as the engine does for checks
        return RuntimeGate(name=name, status="incomplete",
                           details=f"internal error: {type(exc).__name__}: {exc}")
