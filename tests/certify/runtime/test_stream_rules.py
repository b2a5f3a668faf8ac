"""The streaming rules and timings, on synthetic events (no network)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from meshcert.certify.runtime.sse import SSEEvent
from meshcert.certify.runtime.stream import StreamChecker, is_event_stream


def ev(obj: Any, at: float, event: str = "message") -> SSEEvent:
    data = obj if isinstance(obj, str) else json.dumps(obj)
    return SSEEvent(data=data, event=event, arrived=at)


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, *,
          cid: str = "c1", usage: dict[str, int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": cid, "object": "chat.completion.chunk"}
    out["choices"] = [] if delta is None else [{"index": 0, "delta": delta,
                                                "finish_reason": finish}]
    if usage is not None:
        out["usage"] = usage
    return out


def run(events: list[SSEEvent], started: float = 0.0) -> tuple[StreamChecker, list[str]]:
    checker = StreamChecker(started=started)
    for e in events:
        if checker.feed(e):
            break
    return checker, checker.finish()


GOOD = [
    ev(chunk({"role": "assistant", "content": ""}), 0.100),  # OpenAI's first chunk
    ev(chunk({"content": "Hel"}), 0.150),
    ev(chunk({"content": "lo"}), 0.170),
    ev(chunk({"content": "!"}), 0.200),
    ev(chunk({}, "stop"), 0.210),
    ev(chunk(usage={"completion_tokens": 3}), 0.211),  # usage-only chunk
    ev("[DONE]", 0.212),
]


def test_a_good_stream_passes_with_ttft_from_the_first_content_not_the_role_chunk() -> None:
    checker, problems = run(GOOD)
    assert problems == []
    assert checker.ttft_ms == pytest.approx(150.0)
    assert checker.completion_tokens == 3
    assert checker.text == "Hello!"
    m = checker.measurements()
    assert m["completion_tokens_source"] == "usage"
    assert m["itl_mean_ms"] == pytest.approx(25.0)
    assert m["itl_p50_ms"] == pytest.approx(25.0)
    assert checker.tokens_per_s == pytest.approx(3 / 0.2, rel=1e-3)


def test_without_usage_content_events_are_counted() -> None:
    checker, problems = run([e for e in GOOD if "usage" not in e.data])
    assert problems == []
    assert checker.completion_tokens == 3
    assert checker.measurements()["completion_tokens_source"] == "token_events"


def test_empty_content_without_role_is_a_token_but_not_the_first_text() -> None:
    """llama.cpp streams a byte-fallback token that ends mid-character as content ""."""
    events = [ev(chunk({"role": "assistant"}), 0.1), ev(chunk({"content": ""}), 0.2),
              ev(chunk({"content": "é"}), 0.3), ev(chunk({"content": "!"}), 0.4),
              ev(chunk({}, "length"), 0.5), ev("[DONE]", 0.5)]
    checker, problems = run(events)
    assert problems == []
    assert checker.completion_tokens == 3
    assert checker.ttft_ms == pytest.approx(300.0)
    m = checker.measurements()
    assert m["token_events"] == 3 and m["text_events"] == 2
    assert m["itl_mean_ms"] == pytest.approx(100.0)


@pytest.mark.parametrize(("events", "expected"), [
    (GOOD[:-1], "stream ended without data: [DONE]"),
    ([GOOD[1], ev(chunk({"role": "assistant"}), 0.2), *GOOD[2:]], "role delta arrived after"),
    ([e for e in GOOD if "role" not in e.data], "no role delta before"),
    ([*GOOD[:4], ev(chunk({}), 0.21), GOOD[-1]], "last choice chunk has no finish_reason"),
    ([GOOD[0], ev(chunk({"content": "x"}, cid="c2"), 0.2), *GOOD[4:]], "chunk id changed"),
    ([ev({"choices": []}, 0.1), *GOOD], "chunk has no id"),
    ([GOOD[0], ev('{"id": "c1", "choices": [', 0.2), *GOOD[1:]], "malformed JSON"),
    ([GOOD[0], ev('{"error": {"message": "boom"}}', 0.2, "error"), *GOOD[1:]],
     "named SSE event 'error'"),
    ([GOOD[0], ev(chunk({}, "stop"), 0.2), GOOD[-1]], "no non-empty delta.content"),
    ([ev("[DONE]", 0.1)], "no choice chunks"),
    ([GOOD[0], ev("[1, 2]", 0.2), *GOOD[1:]], "not an object"),
])
def test_each_rule_break_is_named(events: list[SSEEvent], expected: str) -> None:
    _, problems = run(events)
    assert any(expected in p for p in problems), problems


def test_a_transport_problem_leads_the_reasons() -> None:
    checker = StreamChecker(started=0.0)
    for e in GOOD[:2]:
        checker.feed(e)
    problems = checker.finish(transport_problem="connection dropped mid-body: x")
    assert problems == ["connection dropped mid-body: x (after 2 event(s))"]


@pytest.mark.parametrize(("value", "ok"), [("text/event-stream", True),
                                           ("Text/Event-Stream; charset=utf-8", True),
                                           ("application/json", False), ("", False)])
def test_content_type(value: str, ok: bool) -> None:
    assert is_event_stream(value) is ok
