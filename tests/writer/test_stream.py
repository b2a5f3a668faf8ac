"""The stream: each artifact's SHA-256 is the file's, taken on the way while its bytes arrive
in file order, and finished by reading back only what arrived out of order."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import xxhash

from meshcert.testing import llama_spec
from meshcert.writer.errors import Aborted
from meshcert.writer.stream import Target
from tests.writer.builders import tiny_source, write_package


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_in_order_artifacts_are_hashed_on_the_way_and_never_read_back(tmp_path: Path) -> None:
    result = write_package(tiny_source(tmp_path), tmp_path / "pkg", fmt="v1")  # source order
    for path, r in result.state.artifacts.items():
        assert r.read_back == 0 and r.sha256 == _sha(result.root / path)


def test_out_of_order_bytes_are_read_back_from_the_first_gap(tmp_path: Path) -> None:
    result = write_package(tiny_source(tmp_path), tmp_path / "pkg")  # v2 sorts by name
    layer = result.state.artifacts["layers/layer-00000.gguf"]
    plan = next(a for a in result.plan.payload if a.path == "layers/layer-00000.gguf")
    # blk.0.attn_norm comes first in the source, but attn_k is first in the part: the header
    # alone was hashed on the way
    assert layer.read_back == plan.size - plan.data_offset
    for path, r in result.state.artifacts.items():
        assert r.sha256 == _sha(result.root / path)


def test_a_source_already_in_name_order_is_never_read_back(tmp_path: Path) -> None:
    spec = llama_spec()
    spec.tensors.sort(key=lambda t: (t.name.split(".")[0] != "blk", t.name))
    result = write_package(tiny_source(tmp_path, spec), tmp_path / "pkg")
    layers = [r for p, r in result.state.artifacts.items() if p.startswith("layers/")]
    assert layers and all(r.read_back == 0 for r in layers)


def test_every_tensor_digest_is_the_xxh3_of_its_source_bytes_on_both_sides(
        tmp_path: Path) -> None:
    source = tiny_source(tmp_path)
    result = write_package(source, tmp_path / "pkg")
    data = source.read_bytes()
    for t in result.plan.source.tensors:
        expected = xxhash.xxh3_128(data[t.start:t.start + t.n_bytes]).hexdigest()
        assert result.state.tensor_digest[t.name] == expected
        assert result.state.package_tensor_digest[t.name] == expected
    assert result.state.source_sha256 == {0: hashlib.sha256(data).hexdigest()}


def test_bytes_changed_in_memory_between_reading_and_writing_abort_the_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fault no real part produces on demand (a buffer reused too early, a bit flipped in
    memory): the write stage changes a byte of one tensor before it is written, so the bytes
    the artifacts get are not the bytes read from the source."""
    original = Target.write

    def corrupting(self: Target, index: int, within: int, data: memoryview) -> None:
        if self.artifact.placements[index].name == "blk.1.ffn_up.weight" and within == 0:
            data[0] ^= 0xFF
        original(self, index, within, data)

    monkeypatch.setattr(Target, "write", corrupting)
    with pytest.raises(Aborted) as caught:
        write_package(tiny_source(tmp_path), tmp_path / "pkg", fmt="v1")
    assert caught.value.code == "verification_failed"
    assert "blk.1.ffn_up.weight" in str(caught.value)
    assert not (tmp_path / "pkg" / "model-package.json").exists()
