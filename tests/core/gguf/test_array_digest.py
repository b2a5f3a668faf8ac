"""ArraySummary.digest: the SHA-256 of a summarized array's encoded items, as the gguf
library's own reader sees those bytes (tokenizer_copies compares long arrays by it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

from gguf import GGUFReader

from meshcert.core.gguf.model import ArraySummary, GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from tests.certify.checks.gguf_edits import Typed, V, write_gguf

N = 5000  # over the reader's 4096-item limit


def _write(path: Path, tokens: list[str], extra: dict[str, object] | None = None) -> Path:
    kv: dict[str, object] = dict(extra or {})
    kv["tokenizer.ggml.tokens"] = tokens
    kv["tokenizer.ggml.scores"] = Typed([float(i) for i in range(len(tokens))], V.ARRAY,
                                        V.FLOAT32)
    return write_gguf(path, "llama", kv)


def _summary(path: Path, key: str) -> ArraySummary:
    header = read_header_file(path)
    assert isinstance(header, GGUFHeader)
    value = header.kv[key]
    assert isinstance(value, ArraySummary)
    return value


def test_the_digest_is_the_sha256_of_the_encoded_items(tmp_path: Path) -> None:
    path = _write(tmp_path / "a.gguf", [f"tok{i}" for i in range(N)])
    fields = GGUFReader(path).fields
    for key in ("tokenizer.ggml.tokens", "tokenizer.ggml.scores"):
        # parts: key length, key, value type, element type, count, then the items
        items = b"".join(part.tobytes() for part in fields[key].parts[5:])
        assert _summary(path, key).digest == hashlib.sha256(items).hexdigest()


def test_equal_arrays_anywhere_in_a_file_have_equal_digests(tmp_path: Path) -> None:
    tokens = [f"tok{i}" for i in range(N)]
    a = _write(tmp_path / "a.gguf", tokens)
    b = _write(tmp_path / "b.gguf", tokens, {"general.name": "shifted by a key"})
    c = _write(tmp_path / "c.gguf", [*tokens[:-1], "<patched>"])
    key = "tokenizer.ggml.tokens"
    assert _summary(a, key).digest == _summary(b, key).digest
    assert _summary(a, key).digest != _summary(c, key).digest
    assert _summary(a, key) == _summary(c, key)  # equality still ignores the digest
