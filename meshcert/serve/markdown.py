"""Text that a package, a catalog entry or a payload wrote, made plain text for the Hub's
Markdown (a comment, a discussion): what it says is shown, nothing in it renders."""

from __future__ import annotations

import re

# what a hostile package or catalog entry could write into the comment, made plain text: no
# HTML, no link or image (`[`, `]`), no code span or emphasis, no table break, no new line, no
# autolink (`https://`, `www.`) and no @mention (entities render the same characters)
_PLAIN = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": " ", "\n": " ",
                        "|": "\\|", "[": "\\[", "]": "\\]", "`": "\\`", "*": "\\*",
                        "_": "\\_", "~": "\\~", "\\": "\\\\", "@": "&#64;"})
RISKY = re.compile(r"[&<>\r\n|\[\]`*~\\@]|://|www\.", re.IGNORECASE)


def plain(text: object) -> str:
    """`text` on one line, as plain text: no HTML, link, image, code span, emphasis, table
    break, autolink or @mention (the entities render as the characters they replace)."""
    out = str(text).translate(_PLAIN).replace("://", "&#58;//")
    return re.sub(r"(?i)www\.", "www&#46;", out)
