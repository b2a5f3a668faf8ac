"""Undo what a paste or a test runner did to a test-backend-ops log, keeping line numbers.

- `ctest -V` prefixes every line of a test's output with `<test number>: ` (`31:   ADD(...)`);
  when most lines carry the same prefix it is removed from every line that has it.
- A paste that wraps long lines splits a case name (`  MUL_MAT(type_a=f16,...,per=[0,` +
  `1,2,3]):   4260 runs - ...`): the parser, meeting a line with an unclosed `NAME(`, asks
  `join_at` for the name joined with the next line(s) up to the one that closes it with `):`
  (at most 3 continuation lines); it blanks the lines used, so every line keeps its number.
  A following line that starts a new `NAME(` is not a continuation: the cut row stays cut
  (the parser reports it).

`strip_ctest` looks at the head of the text only unless it finds the prefix; `join_at` runs
only for the rare lines with an unclosed name, so neither slows down a normal log.
"""

from __future__ import annotations

import re

_CTEST = re.compile(r"^(\d{1,4}): ", re.MULTILINE)
_CLOSES = re.compile(r"\):")
_NEW_ROW = re.compile(r"[A-Z][A-Za-z0-9_.\-]*\(")
MAX_CONTINUATION = 3


def strip_ctest(text: str) -> tuple[str, int]:
    """(text without the `N: ` prefix, lines changed); unchanged unless at least half of the
    first 400 non-empty lines carry one and the same prefix."""
    head = [line for line in text[:65536].split("\n", 400)[:400] if line.strip()]
    if not head:
        return text, 0
    counts: dict[str, int] = {}
    for line in head:
        m = _CTEST.match(line)
        if m is not None:
            counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    if not counts:
        return text, 0
    number, hits = max(counts.items(), key=lambda kv: kv[1])
    if hits * 2 < len(head):
        return text, 0
    prefix = re.compile(rf"^{number}: ?", re.MULTILINE)
    out, n = prefix.subn("", text)
    return out, n


def join_at(lines: list[str], index: int) -> tuple[str | None, int]:
    """(the row name at `lines[index]` joined with its continuation lines, how many were
    used); (None, 0) when no line within MAX_CONTINUATION closes it with `):` or a new row
    starts first (then the row is cut, not wrapped)."""
    merged = lines[index]
    for k in range(1, MAX_CONTINUATION + 1):
        if index + k >= len(lines) or not lines[index + k].strip():
            return None, 0
        more = lines[index + k].strip()
        if _NEW_ROW.match(more):
            return None, 0
        merged += more
        if _CLOSES.search(merged) is not None:
            return merged, k
    return None, 0
