"""Markdown building blocks (GitHub-flavoured Markdown): the one place report text is escaped.

`text` / `code` render any text inert (the --md reports); `plain_cell` / `plain_table` escape
only what breaks a table, for the evidence summary (summary.md and its --md), which keeps the
Phase E script's layout and is made inert as a whole by `inert_document`."""

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


_FENCE = "```"


_TAG_OPEN = re.compile(r"<(?=[A-Za-z/!?])")   # what can start an HTML tag or comment


def _inert_prose(part: str) -> str:
    return _TAG_OPEN.sub("&lt;", part).replace("![", "!\\[")


def inert_document(markdown: str) -> str:
    """A Markdown document written with report text as is (summary.md's layout) with no live
    HTML and no remote image: a `<` that could open a tag or comment (`<x`, `</`, `<!`, `<?`)
    outside code becomes `&lt;` (`<= 1.02` stays as written), `![` is escaped (no image
    loads). Code
    (fenced blocks, backtick spans) is left as written: Markdown shows it literally."""
    out: list[str] = []
    fenced = False
    for line in markdown.split("\n"):
        if line.startswith(_FENCE):
            fenced = not fenced
            out.append(line)
            continue
        if fenced:
            out.append(line)
            continue
        parts = line.split("`")
        if len(parts) % 2 == 0:          # an odd backtick: no span to trust on this line
            out.append(_inert_prose(line))
            continue
        out.append("`".join(p if i % 2 else _inert_prose(p) for i, p in enumerate(parts)))
    return "\n".join(out)
