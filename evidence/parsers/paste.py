"""Undo what a paste or a test runner did to a test-backend-ops log, keeping line numbers.

- `ctest -V` prefixes every line of a test's output with `<test number>: ` (`31:   ADD(...)`);
  when most lines carry the same prefix it is removed from every line that has it.
- A paste that wraps long lines splits a case name (`  MUL_MAT(type_a=f16,...,per=[0,` +
  `1,2,3]):   4260 runs - ...`): a line with an unclosed `NAME(` is joined with the next
  line(s) up to the one that closes it with `):` (at most 3 continuation lines). The joined
  text goes on the first line and the continuation lines become empty, so every later line
  keeps its number. A following line that starts a new `NAME(` is not a continuation: the
  cut row stays cut (the parser reports it).

Both are cheap when there is nothing to undo: one regex search over the text each.
"""

from __future__ import annotations

import re

_CTEST = re.compile(r"^(\d{1,4}): ", re.MULTILINE)
_OPEN_NAME = re.compile(r"^[ \t]*[A-Z][A-Za-z0-9_.\-]*\([^)\n]*$", re.MULTILINE)
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


def join_wrapped(text: str) -> tuple[str, list[int]]:
    """(text with wrapped row names joined, 1-based numbers of the joined first lines)."""
    if _OPEN_NAME.search(text) is None:
        return text, []
    lines = text.split("\n")
    joined: list[int] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "(" in line and ")" not in line and _OPEN_NAME.match(line):
            merged = line
            for k in range(1, MAX_CONTINUATION + 1):
                if i + k >= len(lines) or not lines[i + k].strip():
                    break
                more = lines[i + k].strip()
                if _NEW_ROW.match(more):      # the next row, not a continuation: a cut row
                    break
                merged += more
                if _CLOSES.search(merged) is not None:
                    lines[i] = merged
                    for j in range(1, k + 1):
                        lines[i + j] = ""
                    joined.append(i + 1)
                    i += k
                    break
        i += 1
    return "\n".join(lines), joined
