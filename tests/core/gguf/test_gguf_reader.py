"""The GGUF header reader: what it yields for real and hand-written headers, and how it fails."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from gguf import GGMLQuantizationType as Q

from meshcert.core.byte_source import BytesSource
from meshcert.core.gguf.model import ArraySummary, GGUFHeader, HeaderProblem
from meshcert.core.gguf.reader import (
    ReadLimits,
    read_header,
    read_header_file,
    read_header_with_limits,
)
from meshcert.testing import glm_dsa_spec, llama_spec, write_package
from tests.core.gguf.ggufbuild import KV, GGUFFile, RawTensor, V, nbytes


class CountingSource:
    """A ByteSource over bytes that records every read (as an HTTP range source would issue)."""

    def __init__(self, data: bytes, *, know_size: bool = True) -> None:
        self.data = data
        self.know_size = know_size
        self.reads: list[tuple[int, int]] = []

    @property
    def size(self) -> int | None:
        return len(self.data) if self.know_size else None

    def read(self, offset: int, length: int) -> bytes:
        self.reads.append((offset, length))
        return self.data[offset:offset + length]


class FailingSource(CountingSource):
    def read(self, offset: int, length: int) -> bytes:
        raise OSError(5, "Input/output error")


def ok(result: GGUFHeader | HeaderProblem) -> GGUFHeader:
    assert isinstance(result, GGUFHeader), result
    return result


def err(result: GGUFHeader | HeaderProblem) -> HeaderProblem:
    assert isinstance(result, HeaderProblem), result
    return result


def f32(name: str, n: int, offset: int | None = None) -> RawTensor:
    return RawTensor(name, (n,), int(Q.F32), bytes(4 * n), offset)


def small_file(**changes: object) -> GGUFFile:
    f = GGUFFile(kvs=[KV("general.architecture", V.STRING, "llama"),
                      KV("llama.block_count", V.UINT32, 2)],
                 tensors=[f32("blk.0.attn_norm.weight", 8), f32("blk.0.ffn_norm.weight", 8)])
    for key, value in changes.items():
        setattr(f, key, value)
    return f


# --- real fragments -----------------------------------------------------------------------------

def test_reads_a_real_layer_fragment(tmp_path: Path) -> None:
    spec = glm_dsa_spec()
    info = write_package(spec, tmp_path / "pkg")
    header = ok(read_header_file(info.root / "layers/layer-003.gguf"))
    expected = [t for t in spec.tensors if t.name.startswith("blk.3.")]
    assert header.version == 3
    assert header.architecture == "glm-dsa"
    assert header.kv["glm-dsa.block_count"] == 4
    assert header.kv["glm-dsa.attention.indexer.top_k"] == 768
    assert [(t.name, t.shape, t.ggml_type) for t in header.tensors] == \
        [(t.name, t.shape, int(t.ggml_type)) for t in expected]
    assert [t.n_bytes for t in header.tensors] == [nbytes(t.shape, t.ggml_type) for t in expected]
    assert header.alignment == 32 and header.data_offset % 32 == 0
    assert header.file_size == (info.root / "layers/layer-003.gguf").stat().st_size
    assert header.duplicate_keys == [] and header.duplicate_tensors == []


def test_small_tokenizer_arrays_are_materialized_and_long_ones_summarized(tmp_path: Path) -> None:
    spec = llama_spec(n_vocab=320)
    info = write_package(spec, tmp_path / "pkg")
    path = info.root / "shared/metadata.gguf"
    full = ok(read_header_file(path))
    assert full.kv["tokenizer.ggml.tokens"] == spec.kv["tokenizer.ggml.tokens"]
    assert full.kv["tokenizer.ggml.token_type"] == spec.kv["tokenizer.ggml.token_type"]
    small = ok(read_header_with_limits(BytesSource(path.read_bytes()), ReadLimits(array_items=100)))
    assert small.kv["tokenizer.ggml.tokens"] == ArraySummary(int(V.STRING), 320)
    assert small.kv["tokenizer.ggml.scores"] == ArraySummary(int(V.FLOAT32), 320)
    assert small.kv["tokenizer.chat_template"] == spec.kv["tokenizer.chat_template"]
    assert small.data_offset == full.data_offset


def test_long_arrays_are_skipped_without_losing_what_follows() -> None:
    words = [f"w{i}" * (i % 7) for i in range(20_000)]
    f = small_file()
    f.kvs[1:1] = [KV("tokenizer.ggml.tokens", V.ARRAY, words, V.STRING),
                  KV("tokenizer.ggml.token_type", V.ARRAY, [1] * 20_000, V.INT32)]
    header = ok(read_header(BytesSource(f.to_bytes())))
    assert header.kv["tokenizer.ggml.tokens"] == ArraySummary(int(V.STRING), 20_000)
    assert header.kv["tokenizer.ggml.token_type"] == ArraySummary(int(V.INT32), 20_000)
    assert header.kv["llama.block_count"] == 2
    assert [t.name for t in header.tensors] == ["blk.0.attn_norm.weight", "blk.0.ffn_norm.weight"]


def test_materialized_items_have_a_budget_over_the_whole_header() -> None:
    f = small_file()
    f.kvs += [KV(f"list.{i}", V.ARRAY, list(range(50)), V.UINT16) for i in range(4)]
    header = ok(read_header_with_limits(BytesSource(f.to_bytes()), ReadLimits(total_items=120)))
    assert header.kv["list.0"] == list(range(50))
    assert header.kv["list.1"] == list(range(50))
    assert header.kv["list.2"] == ArraySummary(int(V.UINT16), 50)  # 150 would pass 120


def test_every_value_type_round_trips() -> None:
    values = [KV("u8", V.UINT8, 255), KV("i8", V.INT8, -128), KV("u16", V.UINT16, 65535),
              KV("i16", V.INT16, -32768), KV("u32", V.UINT32, 2**32 - 1),
              KV("i32", V.INT32, -(2**31)), KV("f32", V.FLOAT32, 0.5), KV("b", V.BOOL, True),
              KV("s", V.STRING, "h\u00e9llo \u2581"), KV("u64", V.UINT64, 2**64 - 1),
              KV("i64", V.INT64, -(2**63)), KV("f64", V.FLOAT64, 1e300),
              KV("empty", V.ARRAY, [], V.FLOAT32), KV("bools", V.ARRAY, [True, False], V.BOOL),
              KV("strs", V.ARRAY, ["a", "", "\u00e7"], V.STRING)]
    header = ok(read_header(BytesSource(GGUFFile(kvs=values).to_bytes())))
    assert header.kv == {kv.key: kv.value for kv in values}
    assert header.tensors == []


def test_big_endian_files_are_read() -> None:
    header = ok(read_header(BytesSource(small_file(order=">").to_bytes())))
    assert header.version == 3
    assert header.kv["llama.block_count"] == 2
    assert [t.shape for t in header.tensors] == [(8,), (8,)]


def test_version_2_is_accepted() -> None:
    assert ok(read_header(BytesSource(small_file(version=2).to_bytes()))).version == 2


def test_duplicates_are_recorded_not_fatal() -> None:
    f = small_file()
    f.kvs.append(KV("llama.block_count", V.UINT32, 99))
    f.tensors.append(f32("blk.0.ffn_norm.weight", 8))
    header = ok(read_header(BytesSource(f.to_bytes())))
    assert header.kv["llama.block_count"] == 2  # the first value wins
    assert header.duplicate_keys == ["llama.block_count"]
    assert header.duplicate_tensors == ["blk.0.ffn_norm.weight"]
    assert len(header.tensors) == 3


def test_custom_alignment_sets_the_data_offset() -> None:
    f = small_file(alignment=256)
    f.kvs.append(KV("general.alignment", V.UINT32, 256))
    header = ok(read_header(BytesSource(f.to_bytes())))
    assert header.alignment == 256
    assert header.data_offset % 256 == 0 and header.data_offset > 0


@pytest.mark.parametrize("vtype,value", [(V.UINT32, 0), (V.UINT32, 48), (V.UINT64, 64),
                                         (V.STRING, "32")])
def test_bad_alignment_is_an_invalid_header(vtype: int, value: object) -> None:
    f = small_file()
    f.kvs.append(KV("general.alignment", vtype, value))
    assert err(read_header(BytesSource(f.to_bytes()))).code == "gguf_invalid_header"


def test_unknown_tensor_type_gives_zero_bytes() -> None:
    f = small_file()
    f.tensors[0].ggml_type = 1000
    assert ok(read_header(BytesSource(f.to_bytes()))).tensors[0].n_bytes == 0


# --- failures -----------------------------------------------------------------------------------

def test_not_gguf() -> None:
    e = err(read_header(BytesSource(b"GGML" + bytes(100))))
    assert (e.code, e.offset) == ("gguf_bad_magic", 0)
    assert "GGML" in e.message


@pytest.mark.parametrize("data", [b"", b"GG", b"GGUF", b"GGUF\x03\x00"])
def test_too_short_is_truncated(data: bytes) -> None:
    assert err(read_header(BytesSource(data))).code == "gguf_truncated"


@pytest.mark.parametrize(("data", "code", "says"), [
    (b"", "gguf_truncated", "the file is 0 bytes long"),
    (b"GG", "gguf_truncated", "the file is 2 bytes long"),
    (b"hi\n", "gguf_bad_magic", "the file starts with b'hi\\n'")])
def test_a_file_shorter_than_the_magic_is_named_by_what_it_holds(data: bytes, code: str,
                                                                 says: str) -> None:
    # a 3-byte text file was "0 bytes long": the known size stopped the read before any byte
    e = err(read_header(BytesSource(data)))
    assert (e.code, e.offset) == (code, 0)
    assert says in e.message


@pytest.mark.parametrize("version", [0, 1, 4, 0x7FFFFFFF])
def test_unsupported_versions(version: int) -> None:
    e = err(read_header(BytesSource(small_file(version=version).to_bytes())))
    assert (e.code, e.offset) == ("gguf_unsupported_version", 4)
    assert str(version) in e.message


def test_cut_inside_the_header_is_truncated_with_the_offset() -> None:
    data = small_file().to_bytes()
    e = err(read_header(BytesSource(data[:60])))
    assert e.code == "gguf_truncated"
    assert e.offset is not None and e.offset < 60


def _header_with_patch(patch_at: str, value: bytes) -> bytes:
    """small_file's header with one 8-byte field replaced: 'tensor_count', 'kv_count', or
    'key_len' (the first key's length)."""
    data = bytearray(small_file().to_bytes())
    at = {"tensor_count": 8, "kv_count": 16, "key_len": 24}[patch_at]
    data[at:at + 8] = value
    return bytes(data)


@pytest.mark.parametrize("field,value", [
    ("key_len", (2**63).to_bytes(8, "little")),
    ("tensor_count", (2**40).to_bytes(8, "little")),
    ("kv_count", (2**40).to_bytes(8, "little")),
    ("kv_count", (2**64 - 1).to_bytes(8, "little")),
])
def test_absurd_lengths_and_counts_are_truncated_before_any_allocation(field: str,
                                                                       value: bytes) -> None:
    source = CountingSource(_header_with_patch(field, value))
    assert err(read_header(source)).code == "gguf_truncated"
    assert sum(length for _, length in source.reads) <= len(source.data)


def test_huge_array_length_is_truncated() -> None:
    f = small_file()
    f.kvs.append(KV("arr", V.ARRAY, [1, 2, 3], V.UINT8))
    data = bytearray(f.to_bytes())
    at = data.index(b"arr") + 3 + 4  # key, then element type; then the u64 length
    data[at:at + 8] = (2**62).to_bytes(8, "little")
    assert err(read_header(BytesSource(bytes(data)))).code == "gguf_truncated"


@pytest.mark.parametrize("kv", [
    KV("weird", 13, None, raw=bytes(8)),
    KV("nested", V.ARRAY, None, raw=struct.pack("<IQ", V.ARRAY, 2) + bytes(64)),
    KV("bad_elements", V.ARRAY, None, raw=struct.pack("<IQ", 77, 2) + bytes(64)),
])
def test_unknown_value_types_are_invalid(kv: KV) -> None:
    f = small_file()
    f.kvs.insert(1, kv)
    e = err(read_header(BytesSource(f.to_bytes())))
    assert e.code == "gguf_invalid_header"
    assert kv.key in e.message


def test_too_many_dimensions_is_invalid() -> None:
    f = small_file()
    f.tensors[1] = RawTensor("blk.0.x.weight", (1, 1, 1, 1, 2), int(Q.F32), bytes(8))
    e = err(read_header(BytesSource(f.to_bytes())))
    assert e.code == "gguf_invalid_header" and "5 dimensions" in e.message


def test_header_size_cap() -> None:
    f = small_file()
    f.kvs.append(KV("big", V.STRING, "x" * 10_000))
    e = err(read_header_with_limits(BytesSource(f.to_bytes()), ReadLimits(max_header_bytes=4096)))
    assert e.code == "gguf_invalid_header" and "4096" in e.message


def test_count_caps() -> None:
    data = small_file().to_bytes()
    assert err(read_header_with_limits(BytesSource(data), ReadLimits(max_kv_count=1))).code \
        == "gguf_invalid_header"
    assert err(read_header_with_limits(BytesSource(data), ReadLimits(max_tensor_count=1))).code \
        == "gguf_invalid_header"


def test_io_errors_are_check_not_run(tmp_path: Path) -> None:
    assert err(read_header(FailingSource(bytes(1000)))).code == "check_not_run"
    assert err(read_header_file(tmp_path / "absent.gguf")).code == "check_not_run"


# --- reads --------------------------------------------------------------------------------------

def test_a_small_file_is_one_read_and_tensor_data_is_never_read() -> None:
    f = small_file()
    f.tensors.append(RawTensor("blk.0.big.weight", (1 << 20,), int(Q.F32), bytes(4 << 20)))
    source = CountingSource(f.to_bytes())
    header = ok(read_header(source))
    assert source.reads == [(0, 64 * 1024)]
    assert header.data_offset < 64 * 1024 < len(source.data)


def test_a_large_header_is_read_in_doubling_blocks() -> None:
    f = small_file()
    f.kvs.append(KV("tokenizer.ggml.merges", V.ARRAY, [f"m{i} x" for i in range(100_000)],
                    V.STRING))
    source = CountingSource(f.to_bytes() + bytes(8 << 20))  # 8 MiB of "tensor data" after it
    header = ok(read_header(source))
    ends = [offset + length for offset, length in source.reads]
    assert [offset for offset, _ in source.reads] == [0, *ends[:-1]]  # contiguous, no re-reads
    assert ends[:3] == [64 * 1024, 128 * 1024, 256 * 1024]
    assert len(source.reads) <= 6
    assert ends[-1] < 2 * header.data_offset + 64 * 1024  # never much past the header


def test_a_source_of_unknown_size_learns_it_from_a_short_read() -> None:
    data = small_file().to_bytes()
    header = ok(read_header(CountingSource(data, know_size=False)))
    assert header.file_size == len(data)
    e = err(read_header(CountingSource(data[:50], know_size=False)))
    assert e.code == "gguf_truncated"


def test_each_kv_entry_span_holds_its_exact_wire_bytes() -> None:
    """A writer copying entries verbatim: each span is key + type + value as written, the spans
    tile the metadata section, and read_header_and_bytes hands back the bytes they index: all
    it fetched, so the header's bytes need not be fetched again."""
    from meshcert.core.gguf.reader import read_header_and_bytes

    f = small_file(kvs=[KV("general.architecture", V.STRING, "llama"),
                        KV("llama.block_count", V.UINT16, 2),
                        KV("tokenizer.ggml.tokens", V.ARRAY, [f"t{i}" for i in range(5000)],
                           sub_type=V.STRING),
                        KV("llama.block_count", V.UINT32, 9)])  # a duplicate: first one wins
    data = f.to_bytes()
    source = CountingSource(data)
    header, raw = read_header_and_bytes(source)
    header = ok(header)
    assert len(raw) >= header.header_end and raw == data[:len(raw)]
    assert len(raw) == sum(length for _, length in source.reads)
    assert list(header.kv_spans) == ["general.architecture", "llama.block_count",
                                     "tokenizer.ggml.tokens"]
    spans = list(header.kv_spans.values())
    assert spans[0][0] == 24 and all(a[1] == b[0] for a, b in zip(spans, spans[1:], strict=False))
    start, end = header.kv_spans["llama.block_count"]
    key = b"llama.block_count"
    assert raw[start:end] == struct.pack("<Q", len(key)) + key + struct.pack("<IH", V.UINT16, 2)
    assert isinstance(header.kv["tokenizer.ggml.tokens"], ArraySummary)  # bytes kept all the same


def test_read_header_and_bytes_gives_no_bytes_for_a_bad_header() -> None:
    from meshcert.core.gguf.reader import read_header_and_bytes

    header, raw = read_header_and_bytes(CountingSource(b"NOPE" + bytes(60)))
    assert err(header).code == "gguf_bad_magic" and raw == b""
