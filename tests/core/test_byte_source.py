"""ByteSources: TailCache answers a read inside the last block from memory."""

from __future__ import annotations

from meshcert.core.byte_source import BytesSource, TailCache


def test_a_read_inside_the_last_block_costs_no_read_of_the_inner_source() -> None:
    inner = BytesSource(bytes(range(256)))
    cached = TailCache(inner)
    assert cached.read(0, 128) == bytes(range(128))
    assert cached.read(100, 20) == bytes(range(100, 120))
    assert inner.bytes_read == 128


def test_a_read_outside_the_last_block_goes_to_the_inner_source() -> None:
    inner = BytesSource(bytes(range(256)))
    cached = TailCache(inner)
    cached.read(0, 64)
    assert cached.read(60, 10) == bytes(range(60, 70))  # runs past the block: read again
    assert inner.bytes_read == 74
    assert cached.size == 256


def test_a_read_past_the_end_is_short_as_from_the_inner_source() -> None:
    cached = TailCache(BytesSource(b"abc"))
    cached.read(0, 3)
    assert cached.read(1, 10) == b"bc"
