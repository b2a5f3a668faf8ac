"""Hashing a fragment's metadata-role tensors through a ByteSource: each copy's digest, or the
reason it was not hashed (never an exception, never a silent skip)."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from meshcert.core.byte_source import BytesSource, LocalFileSource
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from meshcert.core.gguf.tensor_digests import digest_metadata_tensors, metadata_role_tensors
from tests.certify.v2_packages import build_v1

ROPE = "rope_freqs.weight"


class FailingSource(BytesSource):
    def read(self, offset: int, length: int) -> bytes:
        raise OSError("connection reset")


def _layer(tmp_path: Path) -> tuple[Path, GGUFHeader]:
    path = build_v1(tmp_path, rope_freqs=True).root / "layers/layer-001.gguf"
    header = read_header_file(path)
    assert isinstance(header, GGUFHeader)
    return path, header


def test_only_metadata_role_tensors_are_hashed(tmp_path: Path) -> None:
    _, header = _layer(tmp_path)
    assert [t.name for t in metadata_role_tensors(header)] == [ROPE]


def test_the_digest_is_the_sha256_of_the_tensors_bytes(tmp_path: Path) -> None:
    path, header = _layer(tmp_path)
    rope = next(t for t in header.tensors if t.name == ROPE)
    start = header.data_offset + rope.offset
    expected = hashlib.sha256(path.read_bytes()[start:start + rope.n_bytes]).hexdigest()
    digests = digest_metadata_tensors(LocalFileSource(path), header)
    assert digests.sha256 == {ROPE: expected} and digests.unread == {}


def test_a_read_failure_is_recorded_as_the_reason(tmp_path: Path) -> None:
    _, header = _layer(tmp_path)
    digests = digest_metadata_tensors(FailingSource(b""), header)
    assert digests.sha256 == {} and "connection reset" in digests.unread[ROPE]


def test_a_copy_over_the_budget_is_not_read(tmp_path: Path) -> None:
    path, header = _layer(tmp_path)
    digests = digest_metadata_tensors(LocalFileSource(path), header, budget=16)
    assert "over the 16-byte budget" in digests.unread[ROPE]


def test_a_copy_beyond_the_end_of_the_file_is_not_read(tmp_path: Path) -> None:
    path, header = _layer(tmp_path)
    short = replace(header, file_size=header.data_offset)
    assert "beyond the end" in digest_metadata_tensors(LocalFileSource(path),
                                                       short).unread[ROPE]


def test_a_source_that_ends_early_is_reported(tmp_path: Path) -> None:
    path, header = _layer(tmp_path)
    cut = BytesSource(path.read_bytes()[:header.data_offset])
    unknown_size = replace(header, file_size=None)
    assert "ends inside" in digest_metadata_tensors(cut, unknown_size).unread[ROPE]
