"""The SQL that llama.cpp tools print (`--output sql` / `-o sql`): one `CREATE TABLE IF NOT
EXISTS <t> (...)` then one `INSERT INTO <t> (col, ...) VALUES ('v', ...);` per line, every
value single-quoted. Shared by the test-backend-ops and llama-bench parsers."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

_INSERT = re.compile(r"\s*INSERT INTO\s+(\w+)\s*\(([^)]*)\)\s*VALUES\s*\((.*)\)\s*;?\s*$",
                     re.IGNORECASE)
_VALUE = re.compile(r"\s*(?:'((?:[^']|'')*)'|(NULL|[-+]?[0-9.eE+\-]+))\s*(,|$)", re.IGNORECASE)


@dataclass
class SqlLine:
    lineno: int
    line: str
    table: str | None                 # None: not an INSERT (see `kind`)
    values: dict[str, str | None] | None
    kind: str                         # "insert", "bad-insert", "create", "other", "blank"
    reason: str = ""


def iter_sql(text: str) -> Iterator[SqlLine]:
    """Classify every line; INSERTs come back as {column: value} (None for NULL)."""
    in_create = False
    for lineno, line in enumerate(text.split("\n"), 1):
        stripped = line.strip()
        if not stripped:
            yield SqlLine(lineno, line, None, None, "blank")
            continue
        upper = stripped[:24].upper()
        if in_create:
            if stripped.startswith(")"):
                in_create = False
            yield SqlLine(lineno, line, None, None, "create")
            continue
        if upper.startswith("CREATE TABLE"):
            in_create = not stripped.endswith(";")
            yield SqlLine(lineno, line, None, None, "create")
            continue
        if not upper.startswith("INSERT"):
            yield SqlLine(lineno, line, None, None, "other")
            continue
        yield _insert(lineno, line)


def _insert(lineno: int, line: str) -> SqlLine:
    m = _INSERT.match(line)
    if m is None:
        return SqlLine(lineno, line, None, None, "bad-insert",
                       "INSERT is not `INSERT INTO t (cols) VALUES (...);`")
    columns = [c.strip() for c in m.group(2).split(",")]
    values = parse_values(m.group(3))
    if values is None or len(values) != len(columns):
        values = _split_unescaped(m.group(3), len(columns)) or values
    if values is None:
        return SqlLine(lineno, line, m.group(1), None, "bad-insert",
                       "VALUES are not a list of quoted values")
    if len(values) != len(columns):
        return SqlLine(lineno, line, m.group(1), None, "bad-insert",
                       f"{len(columns)} columns but {len(values)} values")
    return SqlLine(lineno, line, m.group(1), dict(zip(columns, values, strict=True)), "insert")


def parse_values(text: str) -> list[str | None] | None:
    """'a', 'b''c', 12, NULL -> ['a', "b'c", '12', None]; None when it does not parse."""
    values: list[str | None] = []
    pos = 0
    end = len(text)
    while pos < end:
        m = _VALUE.match(text, pos)
        if m is None:
            return None
        if m.group(1) is not None:
            values.append(m.group(1).replace("''", "'"))
        elif m.group(2).upper() == "NULL":
            values.append(None)
        else:
            values.append(m.group(2))
        pos = m.end()
        if m.group(3) == "":
            break
    return values if pos >= end or not text[pos:].strip() else None


def _split_unescaped(text: str, expected: int) -> list[str | None] | None:
    """llama.cpp does not escape quotes inside values (`'can't'`); when every value is quoted,
    splitting on `', '` still recovers them."""
    text = text.strip()
    if len(text) < 2 or text[0] != "'" or text[-1] != "'":
        return None
    parts: list[str | None] = list(text[1:-1].split("', '"))
    return parts if len(parts) == expected else None
