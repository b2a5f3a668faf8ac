"""Batching and the skip rules of a publish."""

from __future__ import annotations

import hashlib

import pytest

from meshcert.publish.plan import (
    LocalFile,
    RemoteFile,
    batches,
    git_blob_id,
    missing,
    same_bytes,
    stale,
)


def _file(path: str, size: int, sha: str = "a" * 64) -> LocalFile:
    return LocalFile(path, f"/pkg/{path}", size, sha, (size, 0, 0, 0))


def test_batches_respect_file_and_byte_budgets() -> None:
    files = [_file(f"layers/{i}.gguf", 10) for i in range(7)]
    assert [len(b) for b in batches(files, 3, 10**9)] == [3, 3, 1]
    assert [len(b) for b in batches(files, 100, 25)] == [2, 2, 2, 1]
    big = [_file("a", 5), _file("huge", 100), _file("b", 5)]
    assert [[f.path for f in b] for b in batches(big, 10, 50)] == [["a"], ["huge"], ["b"]]
    assert batches([], 3, 3) == []
    with pytest.raises(ValueError):
        batches(files, 0, 10)


def test_an_artifact_is_there_when_the_hub_attests_its_sha256_and_size() -> None:
    local = _file("x.gguf", 10, "b" * 64)
    remote = {
        "x.gguf": RemoteFile("x.gguf", 10, "oid", "b" * 64),
        "y.gguf": RemoteFile("y.gguf", 10, "oid", "c" * 64),
    }
    assert missing([local], remote) == []
    assert missing([_file("y.gguf", 10, "b" * 64)], remote) != []  # other content
    assert missing([_file("x.gguf", 11, "b" * 64)], remote) != []  # other size
    assert missing([_file("z.gguf", 10)], remote) != []  # not there


def test_small_files_compare_by_git_blob_id() -> None:
    data = b'{"schema_version": 1}\n'
    assert git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob
    assert same_bytes(data, RemoteFile("m", len(data), git_blob_id(data), None))
    assert not same_bytes(data + b" ", RemoteFile("m", len(data), git_blob_id(data), None))
    lfs = RemoteFile("m", len(data), "pointer-oid", hashlib.sha256(data).hexdigest())
    assert same_bytes(data, lfs) and not same_bytes(data, None)


def test_stale_gguf_files_are_those_the_manifest_no_longer_declares() -> None:
    remote = {p: RemoteFile(p, 1, "o", None) for p in (
        "layers/layer-000.gguf", "layers/layer-00000.gguf", "README.md",
        "model-package.json", ".gitattributes", "notes.txt")}
    assert stale(remote, ["layers/layer-00000.gguf"]) == ["layers/layer-000.gguf"]
