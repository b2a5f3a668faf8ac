"""An incremental Server-Sent Events parser: network chunks in, events out.

Follows the WHATWG event-stream rules: lines end in CRLF, LF or CR (a CR at the end of one
chunk and an LF at the start of the next are one line break); a line starting with `:` is a
comment (keep-alives such as `: ping`); `field: value` drops one leading space from the value;
several `data:` lines in one event are joined with `\\n`; a blank line dispatches the event; an
event without data is not dispatched. Lines are decoded only once complete, so a multi-byte
UTF-8 character split across chunks is fine.

Deviation, for a smoke test's sake: data still pending when the stream ends (no closing blank
line) is dispatched at `finish()` with `terminated=False` instead of being dropped, so a
`data: [DONE]` without its trailing blank line still counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from meshcert.core.errors import MeshcertError

_CR = 0x0D
_LF = 0x0A


class SSEError(MeshcertError, ValueError):
    """The bytes are not a valid event stream (e.g. a line that is not UTF-8)."""


@dataclass(frozen=True)
class SSEEvent:
    data: str
    event: str = "message"
    last_event_id: str | None = None
    data_lines: int = 1
    arrived: float = 0.0  # clock value given with the chunk that completed the event
    terminated: bool = True  # False: flushed at end of stream without a closing blank line


@dataclass
class SSEParser:
    """Feed raw chunks with `feed(chunk, now)`; call `finish(now)` at end of stream."""

    comments: int = 0
    unknown_fields: set[str] = field(default_factory=set)
    lines: int = 0
    _buf: bytearray = field(default_factory=bytearray)
    _skip_lf: bool = False
    _data: list[str] = field(default_factory=list)
    _event: str = ""
    _last_id: str | None = None
    _first_line: bool = True

    def feed(self, chunk: bytes, now: float = 0.0) -> list[SSEEvent]:
        if not chunk:
            return []
        if self._skip_lf and chunk[0] == _LF:
            chunk = chunk[1:]
        self._skip_lf = False
        self._buf += chunk
        events: list[SSEEvent] = []
        buf = self._buf
        start = 0
        size = len(buf)
        while start < size:
            cr = buf.find(b"\r", start)
            lf = buf.find(b"\n", start)
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                break
            end = min(ends)
            if buf[end] == _CR:
                if end + 1 < size:
                    nxt = end + 2 if buf[end + 1] == _LF else end + 1
                else:
                    nxt = end + 1
                    self._skip_lf = True  # an LF may open the next chunk
            else:
                nxt = end + 1
            self._line(bytes(buf[start:end]), now, events)
            start = nxt
        del buf[:start]
        return events

    def finish(self, now: float = 0.0) -> list[SSEEvent]:
        """End of stream: a last line without a line break, then any undispatched data."""
        events: list[SSEEvent] = []
        if self._buf:
            line = bytes(self._buf)
            self._buf.clear()
            self._line(line, now, events)
        if self._data:
            events.append(self._dispatch(now, terminated=False))
        return events

    def _line(self, raw: bytes, now: float, events: list[SSEEvent]) -> None:
        self.lines += 1
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SSEError(f"line {self.lines} is not UTF-8 ({exc.reason})") from None
        if self._first_line:
            self._first_line = False
            line = line.removeprefix("\ufeff")
        if not line:
            if self._data:
                events.append(self._dispatch(now, terminated=True))
            self._event = ""
            return
        if line.startswith(":"):
            self.comments += 1
            return
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._last_id = value
        elif name == "retry":
            pass
        else:
            self.unknown_fields.add(name)

    def _dispatch(self, now: float, *, terminated: bool) -> SSEEvent:
        event = SSEEvent(data="\n".join(self._data), event=self._event or "message",
                         last_event_id=self._last_id, data_lines=len(self._data), arrived=now,
                         terminated=terminated)
        self._data = []
        self._event = ""
        return event
