"""The short subject of an A/B comparison: what differs between its two sides, on one line.

A side's setup is what comparison.json's `metadata.old` / `metadata.new` hold: a label
(`v0.78.0`) or an object (binary, version, commit, digest, arguments, ...; the parser keeps an
object as its JSON text). The subject names the differing fields only: `skippy-server 8baeeca ->
8eda2ee (version, commit, binary_sha256)`: a name both sides share, one identifying value per side
(the first differing field by `_IDENTITY` order, commits cut to 7 characters, digests to 12),
then the differing fields. Everything else goes to the decision's details (`differences`, and
the whole setups in `old` / `new`). Identical setups say `no setup difference recorded`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

from meshcert.evidence.report import SetupDifference

MAX_SUBJECT = 100
_SIDE = 32
_NAME_KEYS = ("name", "binary", "server", "program", "label", "arm", "model")
_IDENTITY = ("commit", "git_commit", "source_sha", "build_commit", "sha", "version", "tag",
             "label", "name", "binary_sha256", "sha256", "digest", "binary")
_HEX = re.compile(r"[0-9a-f]{12,}")


def _parsed(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _flat(value: Any, prefix: str = "") -> dict[str, str]:
    if isinstance(value, Mapping):
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{prefix}{k}."))
        return out
    key = prefix[:-1] or "setup"
    return {key: value if isinstance(value, str) else json.dumps(value, sort_keys=True)}


def _one_line(text: str, limit: int = _SIDE) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit - 3] + "..."


def _short(field: str, value: str | None) -> str:
    if value is None:
        return "(none)"
    leaf = field.rsplit(".", 1)[-1]
    if _HEX.fullmatch(value):
        return value[:7] if any(w in leaf for w in ("commit", "sha")) and "256" not in leaf \
            else value[:12]
    if leaf in ("binary", "program", "server") and "/" in value:
        value = value.rstrip("/").rsplit("/", 1)[-1]
    return _one_line(value)


def _pair(field: str, old: str | None, new: str | None) -> tuple[str, str]:
    """The two sides' short values; when shortening made them alike (a long label cut at the
    same place), each from the word where they start to differ."""
    a, b = _short(field, old), _short(field, new)
    if a != b or old is None or new is None:
        return a, b
    x, y = " ".join(old.split()), " ".join(new.split())
    at = len(os.path.commonprefix([x, y]))
    start = x.rfind(" ", 0, at) + 1
    start = start if at - start <= 16 else at - 8
    return _one_line("..." + x[start:]), _one_line("..." + y[start:])


def differences(old: Any, new: Any) -> list[SetupDifference]:
    """Every setup field whose value differs between the sides (dotted paths, sorted)."""
    a, b = _flat(_parsed(old)), _flat(_parsed(new))
    return [SetupDifference(field=k, old=a.get(k), new=b.get(k))
            for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]


def _leaf_rank(field: str) -> tuple[int, str]:
    leaf = field.rsplit(".", 1)[-1]
    return (_IDENTITY.index(leaf) if leaf in _IDENTITY else len(_IDENTITY), field)


def subject(old: Any, new: Any) -> tuple[str, list[SetupDifference]]:
    """(one-line subject, the differing fields) of a comparison's two setups."""
    diffs = differences(old, new)
    a = _flat(_parsed(old))
    shared = [a[k] for k in _NAME_KEYS if k in a and all(d.field != k for d in diffs)]
    name = _short("binary", shared[0]) + " " if shared else ""
    if old is None and new is None:
        return "no setup recorded (comparison.json has no metadata.old / metadata.new)", []
    if not diffs:
        label = name.strip() or _one_line(str(old if old is not None else new))
        return f"{label}: no setup difference recorded", []
    key = min((d.field for d in diffs), key=_leaf_rank)
    pick = next(d for d in diffs if d.field == key)
    left, right = _pair(key, pick.old, pick.new)
    head = f"{name}{left} -> {right}"
    if set(a) == {"setup"} and len(diffs) == 1:
        return _one_line(head, MAX_SUBJECT), diffs
    fields = [d.field for d in sorted(diffs, key=lambda d: _leaf_rank(d.field))]
    shown: list[str] = []
    for f in fields:
        rest = len(fields) - len(shown) - 1
        tail = f", +{rest} more" if rest else ""
        if len(head) + len(", ".join([*shown, f])) + len(tail) + 3 > MAX_SUBJECT:
            break
        shown.append(f)
    more = len(fields) - len(shown)
    listed = ", ".join(shown) + (f", +{more} more" if more and shown else f"+{more} more"
                                 if more else "")
    return _one_line(f"{head} ({listed})", MAX_SUBJECT), diffs
