"""Differential: meshcert's reader agrees with gguf.GGUFReader on every KV and tensor info.

Fixtures: every fragment of a llama and a GLM-DSA package, their unsplit sources, a fragment
with a 20k-token tokenizer, big-endian and version-2 files, and a seeded corpus of files written
by gguf.GGUFWriter with every value type and a spread of tensor types and shapes.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from gguf import GGML_QUANT_SIZES, GGUFEndian, GGUFReader, GGUFWriter
from gguf import GGMLQuantizationType as Q

from meshcert.core.byte_source import LocalFileSource
from meshcert.core.gguf.model import ArraySummary, GGUFHeader
from meshcert.core.gguf.reader import ReadLimits, read_header_file, read_header_with_limits
from meshcert.testing import glm_dsa_spec, llama_spec, write_package
from tests.core.gguf.ggufbuild import GGUFFile, V, load

EVERYTHING = ReadLimits(array_items=10**7, total_items=10**8)
TENSOR_TYPES = [Q.F32, Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_K, Q.Q6_K, Q.Q3_K, Q.I8, Q.I32]


def assert_agrees(path: Path) -> None:
    theirs = GGUFReader(path)
    fields = {k: f for k, f in theirs.fields.items() if not k.startswith("GGUF.")}
    full = read_header_with_limits(LocalFileSource(path), EVERYTHING)
    assert isinstance(full, GGUFHeader), full
    assert list(full.kv) == list(fields)
    for key, fld in fields.items():
        assert full.kv[key] == fld.contents(), key
    assert full.version == int(theirs.fields["GGUF.version"].parts[0][0])
    assert full.alignment == theirs.alignment
    assert full.data_offset == theirs.data_offset
    assert [(t.name, t.shape, t.ggml_type, full.data_offset + t.offset, t.n_bytes)
            for t in full.tensors] == \
        [(t.name, tuple(int(d) for d in t.shape), int(t.tensor_type), t.data_offset, t.n_bytes)
         for t in theirs.tensors]
    default = read_header_file(path)  # long arrays summarized: same length and element type
    assert isinstance(default, GGUFHeader)
    for key, value in default.kv.items():
        if isinstance(value, ArraySummary):
            assert value == ArraySummary(int(fields[key].types[-1]), len(fields[key].contents()))
        else:
            assert value == full.kv[key]
    assert default.tensors == full.tensors


@pytest.fixture(scope="module")
def package_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    base = tmp_path_factory.mktemp("diff")
    out: list[Path] = []
    for name, spec in (("llama", llama_spec()), ("glm", glm_dsa_spec())):
        info = write_package(spec, base / name, source_dir=base / f"{name}-src")
        out += sorted(info.root.rglob("*.gguf"))
        assert info.source_path is not None
        out.append(info.source_path)
    return out


def test_every_package_fragment_and_source(package_files: list[Path]) -> None:
    assert len(package_files) == 2 * (3 + 4 + 1)
    for path in package_files:
        assert_agrees(path)


def test_large_tokenizer_fragment(tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.gguf"
    writer = GGUFWriter(str(path), "qwen2")
    n = 20_000
    writer.add_token_list([f"\u0120tok{i}" for i in range(n)])
    writer.add_token_types([1] * n)
    writer.add_token_merges([f"\u0120t ok{i}" for i in range(n)])
    writer.add_tensor("blk.0.attn_norm.weight", np.ones(64, np.float32))
    _finish(writer)
    assert_agrees(path)


def test_big_endian_file(tmp_path: Path) -> None:
    path = tmp_path / "be.gguf"
    writer = GGUFWriter(str(path), "llama", endianess=GGUFEndian.BIG)
    writer.add_uint32("llama.block_count", 3)
    writer.add_array("tokenizer.ggml.scores", [0.5, -1.0, 2.25])
    writer.add_tensor("token_embd.weight", np.arange(64, dtype=np.float32).reshape(4, 16))
    _finish(writer)
    assert_agrees(path)


def test_version_2_and_hand_written_files(tmp_path: Path, package_files: list[Path]) -> None:
    fragment = load(package_files[0])
    for version in (2, 3):
        fragment.version = version
        assert_agrees(fragment.write(tmp_path / f"v{version}.gguf"))
    empty = GGUFFile()  # no KV, no tensors
    assert_agrees(empty.write(tmp_path / "empty.gguf"))


@pytest.mark.parametrize("seed", range(24))
def test_generated_corpus(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    path = tmp_path / f"corpus-{seed}.gguf"
    writer = GGUFWriter(str(path), rng.choice(["llama", "glm-dsa", "qwen2", "made-up-arch"]))
    if rng.random() < 0.3:
        writer.add_custom_alignment(rng.choice([8, 16, 64, 128]))
    for i in range(rng.randint(0, 20)):
        key, value, vtype, sub = _random_kv(rng, i)
        writer.add_key_value(key, value, vtype, sub)
    for i in range(rng.randint(0, 12)):
        _add_random_tensor(writer, rng, f"blk.{i}.t{rng.randint(0, 99)}.weight")
    _finish(writer)
    assert_agrees(path)


def _finish(writer: GGUFWriter) -> None:
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def _random_scalar(rng: random.Random, vtype: V) -> Any:
    bits = {V.UINT8: 8, V.INT8: 8, V.UINT16: 16, V.INT16: 16, V.UINT32: 32, V.INT32: 32,
            V.UINT64: 64, V.INT64: 64}
    if vtype in bits:
        n = bits[vtype]
        signed = vtype in (V.INT8, V.INT16, V.INT32, V.INT64)
        low, high = (-(2 ** (n - 1)), 2 ** (n - 1) - 1) if signed else (0, 2**n - 1)
        return rng.randint(low, high)
    if vtype == V.FLOAT32:
        return float(np.float32(rng.uniform(-1e6, 1e6)))  # representable in f32
    if vtype == V.FLOAT64:
        return rng.uniform(-1e300, 1e300)
    if vtype == V.BOOL:
        return rng.random() < 0.5
    alphabet = "abcxyz \u00e9\u2581\u4e2d\U0001f600\n\"\\"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))


def _random_kv(rng: random.Random, i: int) -> tuple[str, Any, V, V | None]:
    types = [t for t in V if t != V.ARRAY]
    if rng.random() < 0.4:
        sub = rng.choice(types)
        length = rng.choice([1, 2, 7, 100, rng.randint(1, 6000)])
        return f"test.array{i}", [_random_scalar(rng, sub) for _ in range(length)], V.ARRAY, sub
    vtype = rng.choice(types)
    return f"test.key{i}", _random_scalar(rng, vtype), vtype, None


def _add_random_tensor(writer: GGUFWriter, rng: random.Random, name: str) -> None:
    qtype = rng.choice(TENSOR_TYPES)
    block, size = GGML_QUANT_SIZES[qtype]
    dims = [block * rng.randint(1, 4)] + [rng.randint(1, 5) for _ in range(rng.randint(0, 3))]
    numpy_shape = tuple(reversed(dims))
    if qtype in (Q.F32, Q.F16, Q.I8, Q.I32):
        dtype = {Q.F32: np.float32, Q.F16: np.float16, Q.I8: np.int8, Q.I32: np.int32}[qtype]
        writer.add_tensor(name, np.zeros(numpy_shape, dtype=dtype))
        return
    byte_shape = (*numpy_shape[:-1], numpy_shape[-1] // block * size)
    data = np.frombuffer(rng.randbytes(int(np.prod(byte_shape))), dtype=np.uint8)
    writer.add_tensor(name, data.reshape(byte_shape), raw_dtype=qtype)
