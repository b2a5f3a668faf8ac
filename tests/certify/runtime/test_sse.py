"""The SSE reader: line endings, chunk splits, comments, multi-line data, end of stream."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meshcert.certify.runtime.sse import SSEError, SSEEvent, SSEParser


def parse(*chunks: bytes) -> tuple[list[SSEEvent], SSEParser]:
    parser = SSEParser()
    events: list[SSEEvent] = []
    for i, chunk in enumerate(chunks):
        events += parser.feed(chunk, now=float(i))
    events += parser.finish(now=float(len(chunks)))
    return events, parser


STREAM = (b": ping\r\n\r\n"
          b"data: {\"a\": 1}\r\n\r\n"
          b"data: {\"b\":\r\ndata: 2}\r\n\r\n"
          b": keep-alive\r\n\r\n"
          b"event: error\r\ndata: oops\r\n\r\n"
          b"data: [DONE]\r\n\r\n")


def datas(events: list[SSEEvent]) -> list[str]:
    return [e.data for e in events]


@pytest.mark.parametrize("newline", [b"\r\n", b"\n", b"\r"])
def test_every_line_ending_gives_the_same_events(newline: bytes) -> None:
    events, parser = parse(STREAM.replace(b"\r\n", newline))
    assert datas(events) == ['{"a": 1}', '{"b":\n2}', "oops", "[DONE]"]
    assert [e.event for e in events] == ["message", "message", "error", "message"]
    assert parser.comments == 2
    assert all(e.terminated for e in events)


@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_into_network_chunks_gives_the_same_events(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    events, _ = parse(*chunks)
    assert datas(events) == ['{"a": 1}', '{"b":\n2}', "oops", "[DONE]"]


def test_cr_at_the_end_of_a_chunk_and_lf_at_the_start_of_the_next_are_one_break() -> None:
    events, _ = parse(b"data: x\r", b"\ndata: y\r", b"\n\r", b"\n")
    assert datas(events) == ["x\ny"]


def test_a_utf8_character_split_across_chunks_survives() -> None:
    text = "data: {\"t\": \"héllo ✓\"}\n\n".encode()
    cut = text.index("✓".encode()) + 1
    events, _ = parse(text[:cut], text[cut:])
    assert datas(events) == ['{"t": "héllo ✓"}']


def test_field_rules() -> None:
    events, parser = parse(b"\xef\xbb\xbfdata:no-space\nid: 7\nretry: 10\nfoo: bar\ndata\n\n"
                           b"event: ping\n\n")  # an event without data is not dispatched
    assert datas(events) == ["no-space\n"]
    assert events[0].last_event_id == "7"
    assert parser.unknown_fields == {"foo"}


def test_data_pending_at_end_of_stream_is_flushed_but_marked() -> None:
    events, _ = parse(b"data: {\"a\": 1}\n\ndata: [DONE]")
    assert datas(events) == ['{"a": 1}', "[DONE]"]
    assert [e.terminated for e in events] == [True, False]


def test_arrival_time_is_that_of_the_chunk_completing_the_event() -> None:
    events, _ = parse(b"data: a", b"\n\n", b"data: b\n\n")
    assert [e.arrived for e in events] == [1.0, 2.0]


def test_a_line_that_is_not_utf8_is_an_error() -> None:
    with pytest.raises(SSEError, match="not UTF-8"):
        parse(b"data: \xff\xfe\n\n")
