"""The header reader walks a repeated tokenizer once per process: a fragment whose string array
has exactly the bytes of one already walked reuses that walk; any other bytes are walked."""

from __future__ import annotations

from pathlib import Path

from meshcert.core.gguf.model import ArraySummary, GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from tests.core.gguf.ggufbuild import KV, GGUFFile

STRING, ARRAY = 8, 9
N_TOKENS = 5000  # over the reader's 4096-item limit: summarized, not materialized


def _fragment(path: Path, tokens: list[str | bytes], tail: str = "end") -> Path:
    f = GGUFFile(kvs=[KV("tokenizer.ggml.tokens", ARRAY, tokens, sub_type=STRING),
                      KV("general.name", STRING, tail)])
    return f.write(path)


def _read(path: Path) -> GGUFHeader:
    header = read_header_file(path)
    assert isinstance(header, GGUFHeader), header
    return header


def test_identical_token_arrays_read_the_same_whether_walked_or_recognized(
        tmp_path: Path) -> None:
    tokens: list[str | bytes] = [f"tok{i}" for i in range(N_TOKENS)]
    first = _read(_fragment(tmp_path / "a.gguf", tokens, "a"))
    second = _read(_fragment(tmp_path / "b.gguf", tokens, "b"))
    summary = first.kv["tokenizer.ggml.tokens"]
    assert isinstance(summary, ArraySummary) and summary.length == N_TOKENS
    assert second.kv["tokenizer.ggml.tokens"] == summary
    assert second.kv["tokenizer.ggml.tokens"].digest == summary.digest
    assert (first.kv["general.name"], second.kv["general.name"]) == ("a", "b")
    assert second.invalid_utf8 == first.invalid_utf8 == []


def test_same_length_other_bytes_are_walked_and_their_problems_found(tmp_path: Path) -> None:
    tokens: list[str | bytes] = [f"tok{i}" for i in range(N_TOKENS)]
    good = _read(_fragment(tmp_path / "good.gguf", tokens))
    hostile = list(tokens)
    hostile[1234] = b"to\xffk"  # same count, other bytes, not UTF-8
    bad = _read(_fragment(tmp_path / "bad.gguf", hostile))
    assert bad.kv["tokenizer.ggml.tokens"].digest != good.kv["tokenizer.ggml.tokens"].digest
    assert bad.invalid_utf8 == ["item 1234 of array 'tokenizer.ggml.tokens'"]
    again = _read(_fragment(tmp_path / "bad-again.gguf", hostile))  # recognized: same verdict
    assert again.invalid_utf8 == bad.invalid_utf8


def test_a_recognized_array_cut_short_by_the_file_is_still_a_truncation(tmp_path: Path) -> None:
    tokens: list[str | bytes] = [f"tok{i}" for i in range(N_TOKENS)]
    _read(_fragment(tmp_path / "whole.gguf", tokens))
    data = (tmp_path / "whole.gguf").read_bytes()
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(data[:len(data) // 2])
    header = read_header_file(cut)
    assert not isinstance(header, GGUFHeader) and header.code == "gguf_truncated"
