"""Invisible and bidirectional-control code points that make a template read differently from
what it does (the "Trojan Source" class, CVE-2021-42574), found in the raw template text."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

BIDI_CONTROLS = frozenset({
    0x061C,  # ARABIC LETTER MARK
    0x200E, 0x200F,  # LEFT-TO-RIGHT / RIGHT-TO-LEFT MARK
    *range(0x202A, 0x202F),  # LRE, RLE, PDF, LRO, RLO
    *range(0x2066, 0x206A),  # LRI, RLI, FSI, PDI
})
INVISIBLE = frozenset({
    0x00AD,  # SOFT HYPHEN
    0x034F,  # COMBINING GRAPHEME JOINER
    0x115F, 0x1160, 0x3164, 0xFFA0,  # Hangul fillers
    0x180E,  # MONGOLIAN VOWEL SEPARATOR
    *range(0x200B, 0x200E),  # ZERO WIDTH SPACE, ZWNJ, ZWJ
    *range(0x2060, 0x2065),  # WORD JOINER, invisible operators
    0xFEFF,  # ZERO WIDTH NO-BREAK SPACE (BOM)
    *range(0xE0000, 0xE0080),  # TAG characters (can spell hidden ASCII)
})


@dataclass(frozen=True)
class HiddenCodepoint:
    codepoint: int
    line: int
    kind: str  # "bidi control" or "invisible"

    def describe(self) -> str:
        name = unicodedata.name(chr(self.codepoint), "unnamed")
        return f"U+{self.codepoint:04X} {name} ({self.kind}) on line {self.line}"


def hidden_codepoints(text: str) -> list[HiddenCodepoint]:
    """Every bidi control or invisible code point in `text`, with its 1-based line."""
    found: list[HiddenCodepoint] = []
    line = 1
    for char in text:
        code = ord(char)
        if char == "\n":
            line += 1
        elif code in BIDI_CONTROLS:
            found.append(HiddenCodepoint(code, line, "bidi control"))
        elif code in INVISIBLE:
            found.append(HiddenCodepoint(code, line, "invisible"))
    return found
