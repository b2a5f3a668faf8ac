"""What every mesh-llm format parser shares (bench-formats spec, sections 0 and 11).

- `load`: the document, or a finding (truncated JSON, NaN/Infinity tokens) naming file:line;
- `refuse`: a whole file that is not evidence: a `rejected` problem naming the flag, no rows;
- `debug_binary`: a serving binary under `target/debug/skippy...` makes a file non-evidence;
- `unit_of`: the unit a field name implies (`*_ms` ms, `*_tok_s` / `*tokens_per_second` tok/s,
  `accept_rate` / `pass_rate` 0..1, `*_percent` %);
- `MetricRows`: one row per numeric field (`metric` = the producer's field name, `value` in its
  unit, the setup key in `params`), with the JSON pointer of every value in `extra["pointer"]`
  and its unit in `extra["unit"]`; a value its unit contradicts (a negative duration, a rate
  outside 0..1, a non-finite number) is a problem with its pointer, never a row.
"""

from __future__ import annotations

import json
import math
import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping
from contextlib import suppress
from functools import lru_cache
from typing import Any

from meshcert.core.errors import MeshcertError
from meshcert.evidence.parsers.base import MALFORMED, REJECTED, ParsedFile, Row
from meshcert.evidence.parsers.params import format_params

METRIC = "mesh_metric"      # kind of a numeric-field row
PARITY = "mesh_parity"      # kind of a local split parity row
DEBUG_BINARY = re.compile(r"target[/\\]+debug[/\\]+skippy")
_NONFINITE_TOKEN = re.compile(r"(?<![\"\w])(-?Infinity|NaN)(?![\"\w])")
Setup = dict[str, Any]


class NonFinite(MeshcertError, ValueError):
    """A NaN / Infinity token in the JSON text (json.loads would accept it)."""


def _reject_constant(token: str) -> float:
    raise NonFinite(token)


_STRICT = json.JSONDecoder(parse_constant=_reject_constant)


def loads_strict(text: str | bytes) -> Any:
    """json.loads that refuses NaN / Infinity (raises NonFinite) and bad JSON (JSONDecodeError)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    return _STRICT.decode(text)


_MEMO = threading.local()     # (text, doc, error) of the last text detection decoded


def loads_once(text: str) -> Any:
    """loads_strict, remembered for the same str object until `load` takes it: detection
    (`probe.Probe.doc`) and the parser share one decode of a file."""
    memo = getattr(_MEMO, "value", None)
    if memo is not None and memo[0] is text:
        if memo[2] is not None:
            raise memo[2]
        return memo[1]
    try:
        doc = loads_strict(text)
    except ValueError as exc:
        _MEMO.value = (text, None, exc)
        raise
    _MEMO.value = (text, doc, None)
    return doc


def forget_decoded() -> None:
    """Drop the remembered document (a parser that never called `load` left it)."""
    _MEMO.value = None


def load(text: str, source: str, out: ParsedFile, what: str) -> Any | None:
    """The decoded document, or None with a problem naming the line (truncated, bad JSON,
    NaN/Infinity)."""
    try:
        return loads_once(text)
    except NonFinite as exc:
        found = _NONFINITE_TOKEN.search(text)
        line = text.count("\n", 0, found.start()) + 1 if found else None
        out.problem(source, line, found.group(0) if found else str(exc),
                    f"{what}: non-finite number {exc} is not JSON evidence", REJECTED)
    except json.JSONDecodeError as exc:
        truncated = (exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated")
                     or text.rstrip()[-1:] not in ("}", "]"))
        out.problem(source, exc.lineno, text[max(0, exc.pos - 60):exc.pos + 60],
                    f"{what}: {'truncated JSON' if truncated else 'bad JSON'}: {exc.msg} "
                    f"(line {exc.lineno} column {exc.colno})", REJECTED)
    finally:
        _MEMO.value = None      # taken: never hold a document past its parse
    return None


def refuse(out: ParsedFile, source: str, line: int | None, flag: str, reason: str) -> None:
    """Not evidence: a `rejected` problem naming the flag; the file keeps no rows."""
    out.rows.clear()
    out.batches.clear()
    out.problem(source, line, flag, f"not evidence: {reason}", REJECTED)


def debug_binary(text: str) -> str | None:
    """The debug serving binary a file names, if any."""
    found = DEBUG_BINARY.search(text)
    if found is None:
        return None
    end = min(len(text), found.end() + 40)
    return re.split(r"[\"'\s,]", text[found.start():end])[0]


def refuse_debug(text: str, source: str, out: ParsedFile) -> bool:
    binary = debug_binary(text)
    if binary is None:
        return False
    line = text.count("\n", 0, text.find(binary)) + 1 if binary in text else None
    refuse(out, source, line, binary, f"the serving binary {binary} is a debug build (debug "
           "distorts throughput)")
    return True


@lru_cache(maxsize=4096)
def unit_of(field: str) -> str:
    """The unit a producer's field name implies (spec section 0)."""
    name = field.lower()
    if name.endswith("_ms") or "_ms_" in name or name in ("ms",):
        return "ms"
    if name.endswith(("_tok_s", "tokens_per_second", "_t_s")) or name == "tok_s":
        return "tok/s"
    if name in ("accept_rate", "pass_rate", "draft_accept_rate") or name.endswith("_rate"):
        return "ratio"
    if name.endswith("_percent") or name.endswith("_pct"):
        return "%"
    if name.endswith("_bytes"):
        return "bytes"
    if "speedup" in name:
        return "x"
    return "count"


_UNIT_WORDS = {"ms": ("ms", "millisecond", "milliseconds"), "tok/s": ("tok/s", "tokens/s",
               "t/s", "tokens_per_second"), "%": ("%", "percent"), "ratio": ("ratio", "0..1",
               "fraction"), "bytes": ("b", "bytes", "byte")}


def unit_contradiction(field: str, value: float, declared: str | None = None) -> str | None:
    """Why `value` cannot be what `field` names (None: it can)."""
    if not math.isfinite(value):
        return f"{field} = {value!r} is not a finite number"
    unit = unit_of(field)
    if declared is not None:
        words = _UNIT_WORDS.get(unit)
        if words is not None and declared.strip().lower() not in words:
            return f"{field} is in {unit} by its name but the file says unit {declared!r}"
    if unit == "ms" and value < 0:
        return f"{field} = {value:g} ms is a negative duration"
    if unit in ("tok/s", "bytes", "count", "x") and value < 0:
        return f"{field} = {value:g} {unit} is negative"
    if unit == "ratio" and not 0 <= value <= 1:
        return f"{field} = {value:g} is a rate outside 0..1"
    return None


def obj(doc: Any, key: str | int) -> dict[str, Any]:
    """doc[key] when it is an object, else {} (never None)."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, dict) else {}


def items(doc: Any, key: str) -> list[Any]:
    """doc[key] when it is a list, else []."""
    value = doc.get(key) if isinstance(doc, dict) else None
    return value if isinstance(value, list) else []


def number(value: Any) -> float | None:
    """A JSON number (bools are not numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def pointer(*parts: object) -> str:
    """A JSON pointer (RFC 6901) from its reference tokens."""
    out = ""
    for part in parts:
        text = str(part)
        if "~" in text or "/" in text:
            text = text.replace("~", "~0").replace("/", "~1")
        out += "/" + text
    return out


def setup_params(setup: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(canonical `k=v,...`, dict) of a setup key; None values are left out, lists become
    tuples (the tidy table's param_dict convention)."""
    clean: dict[str, Any] = {}
    for key, value in setup.items():
        if value is None:
            continue
        if isinstance(value, list):
            value = tuple(json.dumps(v, sort_keys=True, separators=(",", ":"))
                          if isinstance(v, dict | list) else v for v in value)
        elif isinstance(value, dict):
            value = json.dumps(value, sort_keys=True, separators=(",", ":"))
        elif isinstance(value, bool):
            value = int(value)
        clean[key] = value
    return format_params(clean), clean


_PARAMS: dict[tuple[tuple[str, Any], ...], tuple[str, dict[str, Any]]] = {}
_PARAMS_MAX = 1024


def setup_params_cached(setup: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """setup_params of a setup whose values are all hashable, remembered (runs of one setup
    repeat it); the dict is shared by every row of it, as within a file: never mutate."""
    try:
        key = tuple(setup.items())
        known = _PARAMS.get(key)
    except TypeError:           # an unhashable value: computed each time
        return setup_params(setup)
    if known is None:
        if len(_PARAMS) >= _PARAMS_MAX:
            _PARAMS.clear()
        known = _PARAMS[key] = setup_params(setup)
    return known


def model_identity(identity: Any) -> Setup:
    """`model_identity` as setup keys: `model_id` plus the optional source fields (another
    `source_revision` is another model)."""
    if isinstance(identity, str):
        return {"model_id": identity}
    if not isinstance(identity, dict):
        return {}
    keys = ("model_id", "source_repo", "source_revision", "source_file", "canonical_ref",
            "distribution_id", "selector")
    return {k: identity[k] for k in keys if isinstance(identity.get(k), str | int)}


_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|true|false|null")


class JsonLines:
    """The 1-based line of each value of a decoded JSON text, by its JSON pointer (so a row of a
    pretty-printed file says `report.json:12`, not `:1`). Built on first use, one pass over the
    text; a one-line text answers 1 without scanning."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.one_line = "\n" not in text.strip()
        self._offsets: dict[str, int] | None = None
        self._newlines: list[int] = []

    def line(self, where: str) -> int:
        if self.one_line:
            return 1
        if self._offsets is None:
            self._offsets = {}
            self._newlines = [m.start() for m in re.finditer("\n", self.text)]
            with suppress(ValueError, IndexError, RecursionError):
                _walk(self.text, 0, "", self._offsets)  # not JSON: the lines found so far stand
        offset = self._offsets.get(where)
        while offset is None and where:
            where = where.rsplit("/", 1)[0]         # a derived pointer: its nearest parent
            offset = self._offsets.get(where) if where else 0
        return bisect_right(self._newlines, offset or 0) + 1


def _walk(text: str, pos: int, where: str, out: dict[str, int]) -> int:
    """Record the offset of the value at `pos` (and of everything inside it); its end."""
    pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
    out[where] = pos
    first = text[pos]
    if first == '"':
        return _scanstring(text, pos + 1)[1]
    if first not in "{[":
        found = _SCALAR.match(text, pos)
        if found is None:
            raise ValueError(f"no JSON value at offset {pos}")
        return found.end()
    close = "}" if first == "{" else "]"
    pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text[pos] == close:
        return pos + 1
    index = 0
    while True:
        if first == "{":
            key, pos = _scanstring(text, pos + 1)
            pos = _WHITESPACE.match(text, pos).end() + 1  # type: ignore[union-attr]  # ':'
            pos = _walk(text, pos, where + pointer(key), out)
        else:
            pos = _walk(text, pos, f"{where}/{index}", out)
            index += 1
        pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
        if text[pos] == close:
            return pos + 1
        pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]  # after ','


_new_row = tuple.__new__     # Row from a full tuple of its fields: no per-field call


class MetricRows:
    """Collects one row per numeric field of one setup."""

    def __init__(self, out: ParsedFile, source: str, fmt: str, op: str,
                 setup: Setup | tuple[str, dict[str, Any]], line: int = 1,
                 build: str | None = None, kind: str = METRIC,
                 lines: JsonLines | None = None) -> None:
        """`setup`: the setup key, or its `setup_params` already made (shared by rows);
        `lines`: where each value sits (else every row is on `line`)."""
        self.out, self.source, self.fmt, self.op, self.kind = out, source, fmt, op, kind
        self.params, self.param_dict = setup if isinstance(setup, tuple) \
            else setup_params(setup)
        self.line, self.build, self.lines = line, build, lines
        self.flags: dict[str, Any] = {}     # carried by every row (`extra`), e.g. a loss

    def line_of(self, where: str) -> int:
        return self.lines.line(where) if self.lines is not None else self.line

    def add(self, field: str, value: Any, where: str, *, sample: int | None = None,
            unit: str | None = None, declared: str | None = None,
            extra: Mapping[str, Any] | None = None) -> bool:
        """A row for a numeric value; a problem (not a row) when its unit contradicts it."""
        v = number(value)
        if v is None:
            return False
        implied = unit_of(field)
        wrong = None if declared is None and 0 <= v < math.inf and implied != "ratio" \
            else unit_contradiction(field, v, declared)
        line = self.line if self.lines is None else self.lines.line(where)
        if wrong is not None:
            self.out.problem(self.source, line, f"{where} = {value!r}",
                             f"{wrong} (at {where})", MALFORMED)
            return False
        info = {"unit": unit or implied, "pointer": where, **self.flags, **(extra or {})}
        # positional: the hot path of every mesh-llm format (Row's field order is its contract)
        self.out.rows.append(Row(line, self.fmt, self.kind, None, None, self.build, self.op,
                                 self.params, self.param_dict, None, None, sample, None, None,
                                 None, None, field, v, None, info))
        return True

    def add_all(self, obj: Any, base: str, *, skip: Iterable[str] = (),
                sample: int | None = None) -> int:
        """A row per numeric field of a flat object (nested objects and lists skipped)."""
        if not isinstance(obj, dict):
            return 0
        unit = obj.get("unit")
        if isinstance(unit, str) or self.lines is not None and not self.lines.one_line:
            return self._add_each(obj, base, skip, sample, unit if isinstance(unit, str)
                                  else None)
        # the common case, inlined: finite non-negative numbers of a one-line document
        rows, flags = self.out.rows, self.flags
        fmt, kind, build, op = self.fmt, self.kind, self.build, self.op
        params, pdict, line = self.params, self.param_dict, self.line
        added = 0
        for k, v in obj.items():
            t = type(v)
            if (t is not float and t is not int) or k in skip:
                if t is not str and t is not dict and t is not list and k not in skip:
                    added += self.add(k, v, base + pointer(k), sample=sample)
                continue
            implied = unit_of(k)
            if not 0 <= v < math.inf or implied == "ratio":
                added += self.add(k, v, base + pointer(k), sample=sample)
                continue
            where = base + "/" + k if "/" not in k and "~" not in k else base + pointer(k)
            info = {"unit": implied, "pointer": where, **flags} if flags \
                else {"unit": implied, "pointer": where}
            rows.append(_new_row(Row, (line, fmt, kind, None, None, build, op, params, pdict,
                                       None, None, sample, None, None, None, None, k, float(v),
                                       None, info)))
            added += 1
        return added

    def _add_each(self, obj: dict[str, Any], base: str, skip: Iterable[str],
                  sample: int | None, declared: str | None) -> int:
        added = 0
        for k, v in obj.items():
            if k not in skip and type(v) is not str:
                added += self.add(k, v, base + pointer(k), sample=sample, declared=declared)
        return added
