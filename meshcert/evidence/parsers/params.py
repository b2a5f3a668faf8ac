"""test-backend-ops parameter strings: `type_a=q2_K,ne=[4096,1,1,1],fused_glu=1`.

`parse_params` splits on the commas outside brackets and returns the canonical string (items
stripped of blanks, original order) with a dict: ints as int (0/1 flags included), floats as
float, arrays as tuples, anything else (`q2_K`, `f32`, `inf`) as str. Results are cached; the
returned dict is shared between rows with the same params, so treat it as read-only.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_INT = re.compile(r"[-+]?\d+")
_FLOAT = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def split_top(text: str, sep: str = ",") -> list[str]:
    """Split on `sep` where it is not inside [...] or (...)."""
    if "[" not in text and "(" not in text:
        return text.split(sep)
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch in "[(":
            depth += 1
        elif ch in "])":
            depth = max(0, depth - 1)
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_value(text: str) -> Any:
    """One parameter value: int, float, tuple (for `[...]`) or the stripped string."""
    text = text.strip()
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    if len(text) >= 2 and text[0] == "[" and text[-1] == "]":
        inner = text[1:-1].strip()
        return tuple(parse_value(p) for p in split_top(inner)) if inner else ()
    return text


def _canonical_value(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == "[" and text[-1] == "]":
        inner = text[1:-1].strip()
        return "[" + ",".join(_canonical_value(p) for p in split_top(inner)) + "]" if inner \
            else "[]"
    return text


@lru_cache(maxsize=65536)
def parse_params(text: str) -> tuple[str, dict[str, Any]]:
    """(canonical string, parsed dict) of a `key=value,...` list. An item without `=` keeps
    its text as key with value "" (test-backend-ops never prints one, but a fork might)."""
    text = text.strip()
    if not text:
        return "", {}
    items: list[str] = []
    parsed: dict[str, Any] = {}
    for raw in split_top(text):
        item = raw.strip()
        if not item:
            continue
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            items.append(key)
            parsed[key] = ""
            continue
        canon = _canonical_value(value)
        items.append(f"{key}={canon}")
        parsed[key] = parse_value(canon)
    return ",".join(items), parsed


def format_params(values: dict[str, Any]) -> str:
    """The canonical `k=v,...` string of a dict (arrays as `[a,b]`, bools as 0/1)."""
    return ",".join(f"{k}={_format_value(v)}" for k, v in values.items())


def _format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, tuple | list):
        return "[" + ",".join(_format_value(v) for v in value) + "]"
    if value is None:
        return ""
    return str(value)
