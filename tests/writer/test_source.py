"""The source: one file or a split set, checked before anything is planned or written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from meshcert.core.errors import Refused
from meshcert.testing import llama_spec
from meshcert.writer.source import load_local
from tests.core.gguf.ggufbuild import KV, GGUFFile, RawTensor, V
from tests.writer.builders import tiny_source


def test_a_split_set_is_read_from_its_first_shard(tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    source = load_local(str(first))
    assert [f.name for f in source.files] == [f"tiny-llama-F16-{i:05d}-of-00004.gguf"
                                              for i in range(1, 5)]
    assert len(source.tensors) == len(llama_spec().tensors)
    assert {t.shard for t in source.tensors} == {0, 1, 2, 3}
    assert all(key not in dict(source.kv_entries()) for key in ("split.no", "split.count"))
    assert source.architecture == "llama" and source.block_count == 4


def test_a_later_shard_is_refused_naming_the_first(tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    with pytest.raises(Refused, match="00001-of-00004") as err:
        load_local(str(first).replace("00001-of", "00002-of"))
    assert err.value.code == "usage"


def test_a_missing_sibling_is_refused(tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    Path(str(first).replace("00001-of", "00003-of")).unlink()
    with pytest.raises(Refused, match="tiny-llama-F16-00003-of-00004.gguf") as err:
        load_local(str(first))
    assert err.value.code == "missing_sibling"


def test_a_sibling_from_another_place_in_the_set_is_refused(tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    second, third = (Path(str(first).replace("00001-of", f"0000{i}-of")) for i in (2, 3))
    shutil.copy(third, second)  # shard 3's bytes under shard 2's name
    with pytest.raises(Refused, match="split.no=2") as err:
        load_local(str(first))
    assert err.value.code == "sibling_mismatch"


def test_a_shard_not_named_as_one_is_refused(tmp_path: Path) -> None:
    first = tiny_source(tmp_path, split=10)
    alone = tmp_path / "renamed.gguf"
    shutil.copy(first, alone)
    with pytest.raises(Refused, match="shard 1 of 4") as err:
        load_local(str(alone))
    assert err.value.code == "sibling_mismatch"


def _gguf(tmp_path: Path, **changes: object) -> Path:
    f = GGUFFile(kvs=[KV("general.architecture", V.STRING, "llama"),
                      KV("llama.block_count", V.UINT32, 1),
                      KV("llama.embedding_length", V.UINT32, 8)],
                 tensors=[RawTensor("blk.0.attn_norm.weight", (8,), 0, bytes(32))])
    for key, value in changes.items():
        setattr(f, key, value)
    return f.write(tmp_path / "odd.gguf")


def test_hostile_or_broken_headers_are_refused_before_any_planning(tmp_path: Path) -> None:
    duplicate = _gguf(tmp_path, kvs=[KV("general.architecture", V.STRING, "llama"),
                                     KV("llama.block_count", V.UINT32, 1),
                                     KV("llama.block_count", V.UINT32, 9)])
    with pytest.raises(Refused, match="duplicate metadata key") as err:
        load_local(str(duplicate))
    assert err.value.code == "hostile_source"
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(_gguf(tmp_path).read_bytes()[:-16])
    with pytest.raises(Refused, match="past the end") as err:
        load_local(str(cut))
    assert err.value.code == "bad_source"
    (tmp_path / "text.gguf").write_text("not a model")
    with pytest.raises(Refused, match="not a readable GGUF header"):
        load_local(str(tmp_path / "text.gguf"))


def test_entries_are_the_sources_own_bytes(tmp_path: Path) -> None:
    path = _gguf(tmp_path, kvs=[KV("general.architecture", V.STRING, "llama"),
                                KV("llama.block_count", V.UINT16, 1),
                                KV("odd.flag", V.BOOL, True),
                                KV("odd.big", V.INT64, -5)])
    data = path.read_bytes()
    entries = dict(load_local(str(path)).kv_entries())
    assert entries["llama.block_count"] in data  # u16 stays u16: copied, never re-encoded
    assert entries["llama.block_count"].endswith(b"\x02\x00\x00\x00\x01\x00")  # type 2, value
    assert entries["odd.big"].endswith(b"\x0b\x00\x00\x00" + (-5).to_bytes(8, "little",
                                                                            signed=True))
