"""Markdown building blocks (GitHub-flavoured Markdown): the one place report text is escaped.

`text` / `code` render any text inert (the --md reports); `plain_cell` / `plain_table` escape
only what breaks a table, for summary.md, which keeps the Phase E script's layout."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

_PUNCT = re.compile(r"([\\`*_\[\]|~#!])")


def text(value: object) -> str:
    """Plain text: HTML special characters as entities, Markdown punctuation escaped, one line."""
    raw = " ".join(str(value).split())
    raw = raw.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _PUNCT.sub(r"\\\1", raw)


def code(value: object) -> str:
    """Inline code as an HTML `<code>` element around escaped text: unlike a backtick span it
    keeps no raw `<` from the report, and pipes cannot break a table."""
    escaped = text(value)
    return f"<code>{escaped}</code>" if escaped else ""


def table(headers: Sequence[str], rows: Sequence[Sequence[str]],
          align: Sequence[str] | None = None) -> list[str]:
    """A GFM table; cells must already be escaped (use `text` / `code`). align: 'l' or 'r'."""
    marks = [("---:" if a == "r" else "---") for a in (align or ["l"] * len(headers))]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(marks) + " |"]
    lines += ["| " + " | ".join(cell or " " for cell in row) + " |" for row in rows]
    return lines


def plain_cell(value: object) -> str:
    """A cell of summary.md, which keeps the Phase E script's layout: the text as written
    (backticks and emphasis in it stay Markdown), only `|` escaped and line breaks joined."""
    return str(value).replace("|", "\\|").replace("\n", " ")


def plain_table(headers: Iterable[str], rows: Iterable[Iterable[object]]) -> list[str]:
    """A GFM table of `plain_cell`s, headers as given, every column left-aligned."""
    head = list(headers)
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    lines += ["| " + " | ".join(plain_cell(c) for c in row) + " |" for row in rows]
    return lines


STATUS_ICONS = {"passed": "\u2705", "failed": "\u274c", "incomplete": "\u26a0\ufe0f",
                "not_required": "\u2796", "warning": "\u26a0\ufe0f", "error": "\u274c",
                "skipped": "\u2796", "source": "\u2022"}


def status(value: str) -> str:
    return f"{STATUS_ICONS.get(value, '')} {text(value.replace('_', ' '))}".strip()
