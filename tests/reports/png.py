"""Decode the PNGs Chromium writes (8-bit RGB/RGBA, not interlaced) with the stdlib only."""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Image:
    width: int
    height: int
    channels: int
    rows: list[bytes]  # unfiltered scanlines

    def pixel(self, x: int, y: int) -> tuple[int, int, int]:
        at = x * self.channels
        row = self.rows[y]
        return row[at], row[at + 1], row[at + 2]

    def count_near(self, colour: tuple[int, int, int], *, top: int = 0, bottom: int | None = None,
                   tolerance: int = 24, step: int = 2) -> int:
        """Pixels within `tolerance` (per channel) of `colour` in rows top..bottom."""
        hits = 0
        for y in range(top, min(bottom or self.height, self.height), step):
            for x in range(0, self.width, step):
                r, g, b = self.pixel(x, y)
                if (abs(r - colour[0]) <= tolerance and abs(g - colour[1]) <= tolerance
                        and abs(b - colour[2]) <= tolerance):
                    hits += 1
        return hits

    def distinct_colours(self, step: int = 4) -> int:
        return len({self.pixel(x, y) for y in range(0, self.height, step)
                    for x in range(0, self.width, step)})


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(data: bytes) -> Image:
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, bytearray()
    width = height = channels = 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and interlace == 0 and colour_type in (2, 6), (depth, colour_type)
            channels = 3 if colour_type == 2 else 4
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(bytes(idat))
    stride = width * channels
    rows: list[bytes] = []
    previous = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind = raw[start]
        line = bytearray(raw[start + 1:start + 1 + stride])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up = previous[i]
            corner = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + ((left + up) >> 1)) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(bytes(line))
        previous = line
    return Image(width, height, channels, rows)
