"""Corruption: truncations and random byte mutations of real headers never raise.

Every result is a GGUFHeader or a HeaderProblem with a code of the code table, and nothing reads
past what the file holds. Seeded, with a bounded number of cases, so failures reproduce.
"""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest

from meshcert.core.codes import CODES
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem
from meshcert.core.gguf.reader import read_header
from meshcert.testing import glm_dsa_spec, write_package
from tests.core.gguf.ggufbuild import load
from tests.core.gguf.test_gguf_reader import CountingSource

HEADER_CODES = {"gguf_bad_magic", "gguf_unsupported_version", "gguf_truncated",
                "gguf_invalid_header"}


@pytest.fixture(scope="module")
def fragment(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    info = write_package(glm_dsa_spec(), tmp_path_factory.mktemp("fuzz") / "pkg")
    return (info.root / "layers/layer-003.gguf").read_bytes()


@pytest.fixture(scope="module")
def metadata(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    info = write_package(glm_dsa_spec(), tmp_path_factory.mktemp("fuzz-meta") / "pkg")
    return (info.root / "shared/metadata.gguf").read_bytes()


def infos_end(data: bytes, tmp_path: Path) -> int:
    """Where the tensor infos end (padding excluded), from an independent re-serialization."""
    path = tmp_path / "f.gguf"
    path.write_bytes(data)
    header = load(path).header_bytes()
    assert data.startswith(header)  # the struct writer reproduces GGUFWriter's layout exactly
    return len(header)


def check(data: bytes) -> GGUFHeader | HeaderProblem:
    source = CountingSource(data)
    result = read_header(source)
    assert isinstance(result, GGUFHeader | HeaderProblem)
    if isinstance(result, HeaderProblem):
        assert result.code in HEADER_CODES and result.code in CODES
        assert result.message
    assert all(offset + length <= max(len(data), 64 * 1024) for offset, length in source.reads)
    return result


def test_truncation_at_every_offset_of_a_header(fragment: bytes, tmp_path: Path) -> None:
    full = read_header(CountingSource(fragment))
    assert isinstance(full, GGUFHeader)
    end = infos_end(fragment, tmp_path)
    for cut in range(end + 40):
        result = check(fragment[:cut])
        if cut < end:
            assert isinstance(result, HeaderProblem) and result.code in (
                "gguf_truncated", "gguf_bad_magic"), cut
            assert result.code == "gguf_truncated" or cut < 4
        else:  # the infos are complete: the header reads, and knows the file is short
            assert isinstance(result, GGUFHeader), cut
            assert result.file_size == cut and result.tensors == full.tensors


@pytest.mark.parametrize("seed", range(6))
def test_random_mutations_never_raise(fragment: bytes, metadata: bytes, seed: int) -> None:
    rng = random.Random(seed)
    for base in (fragment, metadata):
        region = min(len(base), 4096 if base is fragment else 16384)
        for _ in range(250):
            data = bytearray(base)
            for _ in range(rng.randint(1, 8)):
                _mutate(rng, data, region)
            check(bytes(data))


def _mutate(rng: random.Random, data: bytearray, region: int) -> None:
    at = rng.randrange(4, min(region, len(data)) - 8)  # past the magic: exercise the parser
    kind = rng.randrange(5)
    if kind == 0:
        data[at] ^= 1 << rng.randrange(8)
    elif kind == 1:
        data[at] = rng.randrange(256)
    elif kind == 2:  # a plausible-looking huge length or count
        data[at:at + 8] = struct.pack("<Q", rng.choice([2**63, 2**40, 2**32 - 1, 0,
                                                        rng.getrandbits(64)]))
    elif kind == 3:
        data[at:at + 4] = struct.pack("<I", rng.choice([9, 13, 0xFFFFFFFF, 5, 8]))
    else:
        del data[at:at + rng.randint(1, 16)]


def test_random_garbage_never_raises() -> None:
    rng = random.Random(1234)
    for _ in range(500):
        size = rng.choice([0, 3, 24, 100, 5000])
        prefix = b"GGUF" + struct.pack("<I", rng.choice([2, 3])) if rng.random() < 0.8 else b""
        check(prefix + rng.randbytes(size))


def test_truncated_tokenizer_metadata(metadata: bytes) -> None:
    """Cut the metadata fragment inside its tokenizer arrays, at many points."""
    full = read_header(CountingSource(metadata))
    assert isinstance(full, GGUFHeader)
    for cut in range(24, full.data_offset - 64, 97):
        result = check(metadata[:cut])
        assert isinstance(result, HeaderProblem) and result.code == "gguf_truncated", cut
