"""What format detection looks at in one text: its head, first character, first line's
columns, upper-cased start, and (for JSON) the decoded document, each computed once and only
when a rule asks. The decoded document is shared with the parser (`mesh_json.load`), so a JSON
file is decoded once for detection and parsing together."""

from __future__ import annotations

from contextlib import suppress
from functools import cached_property
from typing import Any

from meshcert.evidence.parsers.mesh_json import loads_once

HEAD = 1 << 20          # detection reads the first MB (body rules: then the rest)
NOT_JSON = object()     # `Probe.doc` of a text that does not decode as one JSON value


class Probe:
    def __init__(self, text: str, name: str = "") -> None:
        self.text = text.lstrip("\ufeff")
        self.name = name
        self.head = self.text[:HEAD]
        self.start = self.head.lstrip()[:1]
        self.body = self.head           # what body rules search: the head, then the whole text
        self.json_like = self.start in ("{", "[")
        self._doc: Any = None
        self._decoded = False

    @cached_property
    def upper(self) -> str:
        return self.head[:20000].upper()

    @cached_property
    def first_columns(self) -> set[str]:
        for line in self.head.split("\n", 50)[:50]:
            if line.strip():
                first = line.strip()
                return {c.strip().strip('"') for c in first.split(",")} if "," in first else set()
        return set()

    @property
    def doc(self) -> Any:
        """The decoded JSON document (NaN / Infinity refused), or NOT_JSON (decoded once)."""
        if not self._decoded:
            self._decoded = True
            self._doc = NOT_JSON
            if self.json_like:
                with suppress(ValueError):
                    self._doc = loads_once(self.text)
        return self._doc

    def has(self, *keys: str) -> bool:
        """Every `"key"` in the head (for JSON that does not decode: truncated, JSONL)."""
        return all(f'"{k}"' in self.head for k in keys)
