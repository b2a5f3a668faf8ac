"""The streaming chat completion: the spec's SSE rules, checked event by event, and timings.

Rules (certification.md): `text/event-stream`; every event `data: <json>` with one `id`
throughout; role before content; a `finish_reason` on the last choice chunk; terminated by
`data: [DONE]`. Also required here, as for the non-streamed chat gate: some non-empty content.

Timings are taken from the arrival time of the network chunk that completed each event:
- token events: deltas carrying a string `content`, except an empty one riding with the `role`
  (OpenAI opens with `{"role": "assistant", "content": ""}`, which is no token). An empty
  content without a role does count: llama.cpp streams a byte-fallback token that does not yet
  complete a UTF-8 character as `""`;
- TTFT: request sent -> first event carrying NON-EMPTY `delta.content` (the first visible text;
  a role-only first chunk does not count);
- inter-token latency: gaps between consecutive token events;
- completion tokens: `usage.completion_tokens` when the stream reports usage, else the number of
  token events (an approximation: a server may pack several tokens into one event);
- tokens/s: completion tokens / (request sent -> last token event).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from meshcert.certify.runtime.rules import usage_completion_tokens
from meshcert.certify.runtime.sse import SSEEvent
from meshcert.certify.runtime.stats import latency_summary, rounded

MAX_PROBLEMS = 5


def is_event_stream(content_type: str) -> bool:
    return content_type.split(";", 1)[0].strip().lower() == "text/event-stream"


@dataclass
class StreamChecker:
    """Feed it the parsed events in order; it records rule breaks and timings."""

    started: float  # perf_counter when the request was sent
    scrub: Callable[[str], str] = str  # applied to server text before it is cut into reasons
    events: int = 0
    done: bool = False
    problems: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)  # distinct chunk ids, in order seen
    role_seen: bool = False
    content_before_role: bool = False
    choice_chunks: int = 0
    last_choice_finish: str | None = None
    token_times: list[float] = field(default_factory=list)
    first_text_at: float | None = None
    text_parts: list[str] = field(default_factory=list)
    usage_tokens: int | None = None
    usage_chunks: int = 0

    def _clip(self, text: str, limit: int) -> str:
        text = self.scrub(text)
        return text if len(text) <= limit else text[:limit] + "..."

    def problem(self, text: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(text)

    def feed(self, event: SSEEvent) -> bool:
        """Check one event; True once `data: [DONE]` arrived (stop reading)."""
        self.events += 1
        n = self.events
        if event.event != "message":
            self.problem(f"event {n} is a named SSE event {event.event!r}, not a plain data "
                         f"event: {self._clip(event.data, 120)!r}")
            return False
        if event.data.strip() == "[DONE]":
            self.done = True
            return True
        try:
            chunk = json.loads(event.data)
        except (ValueError, RecursionError) as exc:
            self.problem(f"event {n}: malformed JSON ({exc}): {self._clip(event.data, 80)!r}")
            return False
        if not isinstance(chunk, dict):
            self.problem(f"event {n}: data is JSON {type(chunk).__name__}, not an object")
            return False
        self._chunk(n, chunk, event.arrived)
        return False

    def _chunk(self, n: int, chunk: dict[str, Any], arrived: float) -> None:
        if isinstance(chunk.get("error"), dict | str):
            self.problem(f"event {n}: error in stream: "
                         f"{self._clip(json.dumps(chunk['error']), 160)}")
        chunk_id = chunk.get("id")
        if not isinstance(chunk_id, str) or not chunk_id:
            self.problem(f"event {n}: chunk has no id")
        elif chunk_id not in self.ids:
            self.ids.append(chunk_id)
            if len(self.ids) == 2:
                self.problem(f"event {n}: chunk id changed from "
                             f"{self._clip(self.ids[0], 60)!r} to {self._clip(chunk_id, 60)!r}")
        tokens = usage_completion_tokens(chunk)
        if tokens is not None:
            self.usage_tokens = tokens
            self.usage_chunks += 1
        choices = chunk.get("choices")
        if not isinstance(choices, list) or not choices:
            return  # a usage-only chunk (or a keep-alive object)
        self.choice_chunks += 1
        finish: str | None = None
        for choice in choices:
            if not isinstance(choice, dict):
                self.problem(f"event {n}: a choice is not an object")
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                self._delta(n, delta, arrived)
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                finish = reason
        self.last_choice_finish = finish

    def _delta(self, n: int, delta: dict[str, Any], arrived: float) -> None:
        role = delta.get("role")
        has_role = isinstance(role, str) and bool(role)
        if has_role:
            if self.token_times and not self.role_seen:
                self.problem(f"event {n}: role delta arrived after content")
            self.role_seen = True
        content = delta.get("content")
        if isinstance(content, str) and (content or not has_role):
            if not self.role_seen:
                self.content_before_role = True
            self.token_times.append(arrived)
            if content:
                if self.first_text_at is None:
                    self.first_text_at = arrived
                self.text_parts.append(content)

    def finish(self, *, transport_problem: str | None = None) -> list[str]:
        """All rule breaks, once the stream is over (or broke off)."""
        problems = list(self.problems)
        if transport_problem:
            problems.insert(0, f"{transport_problem} (after {self.events} event(s))")
        elif not self.done:
            problems.append(f"stream ended without data: [DONE] (after {self.events} "
                            "event(s))")
        if transport_problem is None:
            if self.content_before_role and not self.role_seen:
                problems.append("content arrived with no role delta before it")
            if self.choice_chunks == 0:
                problems.append("no choice chunks in the stream")
            elif self.last_choice_finish is None:
                problems.append("last choice chunk has no finish_reason")
            if self.first_text_at is None:
                problems.append("stream carried no non-empty delta.content")
        return problems[:MAX_PROBLEMS + 1]

    # -- measurements -----------------------------------------------------------------------
    @property
    def text(self) -> str:
        return "".join(self.text_parts)

    @property
    def ttft_ms(self) -> float | None:
        if self.first_text_at is None:
            return None
        return rounded((self.first_text_at - self.started) * 1000)

    @property
    def completion_tokens(self) -> int | None:
        if self.usage_tokens is not None:
            return self.usage_tokens
        return len(self.token_times) if self.token_times else None

    @property
    def tokens_per_s(self) -> float | None:
        tokens = self.completion_tokens
        if not tokens or not self.token_times:
            return None
        span = self.token_times[-1] - self.started
        return rounded(tokens / span, 2) if span > 0 else None

    def measurements(self) -> dict[str, float | int | str | None]:
        times = self.token_times
        gaps = [(b - a) * 1000 for a, b in zip(times, times[1:], strict=False)]
        out: dict[str, float | int | str | None] = {
            "events": self.events,
            "token_events": len(times),
            "text_events": len(self.text_parts),
            "completion_tokens_source": "usage" if self.usage_tokens is not None
            else "token_events",
        }
        summary = latency_summary(gaps, "itl")
        out |= {k: v for k, v in summary.items() if not k.endswith("_max_ms")}
        if len(times) > 1 and times[-1] > times[0]:
            out["decode_token_events_per_s"] = rounded((len(times) - 1)
                                                       / (times[-1] - times[0]), 2)
        return out
