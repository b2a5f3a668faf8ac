"""Parallel hashing: right digests, errors as results, a cache that never hides a mismatch."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest

from meshcert.core.hashing import VerifyCache, hash_files, sha256_file
from tests.conftest import PackageFactory, certify_dir, codes


class CountingProgress:
    def __init__(self) -> None:
        self.total: int | None = None
        self.done = 0
        self.ended = False

    def begin(self, label: str, total: int | None) -> None:
        self.total = total

    def advance(self, amount: int) -> None:
        self.done += amount

    def end(self) -> None:
        self.ended = True


def test_hash_files_matches_hashlib_and_reports_progress(tmp_path: Path) -> None:
    paths = []
    for i in range(5):
        p = tmp_path / f"f{i}"
        p.write_bytes(os.urandom(100_000 * (i + 1)))
        paths.append(str(p))
    progress = CountingProgress()
    results = hash_files(paths, workers=2, progress=progress)
    for name in paths:
        assert results[name].sha256 == hashlib.sha256(Path(name).read_bytes()).hexdigest()
    assert progress.total == progress.done == sum(os.path.getsize(p) for p in paths)
    assert progress.ended


def test_missing_file_becomes_an_error_result(tmp_path: Path) -> None:
    result = hash_files([str(tmp_path / "nope")])[str(tmp_path / "nope")]
    assert result.sha256 is None and "FileNotFoundError" in (result.error or "")


def test_sha256_file_streams_empty_file(tmp_path: Path) -> None:
    p = tmp_path / "empty"
    p.write_bytes(b"")
    assert sha256_file(str(p)) == hashlib.sha256(b"").hexdigest()


def test_cache_skips_unchanged_files_but_a_mismatch_stays_a_mismatch(
        packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    cache = tmp_path / "verify-cache.json"
    first = certify_dir(info.root, verify_cache=str(cache))
    assert first.status == "passed" and cache.exists()
    assert all(s.cached_artifacts == 0 for s in first.materialized_stages)
    assert first.cache_hits == 0
    second = certify_dir(info.root, verify_cache=str(cache))
    assert second.status == "passed"
    assert all(s.cached_artifacts == s.verified_artifacts > 0
               for s in second.materialized_stages)
    assert second.cache_hits == len(second.digests) > 0
    # an edited manifest is another package: nothing of the cache is used for it
    packages.edit_manifest(info, lambda m: m["layers"][0].update(sha256="1" * 64))
    third = certify_dir(info.root, verify_cache=str(cache))
    hit = next(f for f in third.findings if f.code == "artifact_sha256_mismatch")
    assert "verification cache" not in hit.message and third.status == "failed"
    assert third.cache_hits == 0


def test_cache_misses_after_content_changes(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    cache = tmp_path / "c.json"
    certify_dir(info.root, verify_cache=str(cache))
    target = info.root / "layers" / "layer-001.gguf"
    data = bytearray(target.read_bytes())
    data[-1] ^= 1
    stat = target.stat()
    target.write_bytes(bytes(data))
    os.utime(target, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size and mtime
    assert "artifact_sha256_mismatch" in codes(certify_dir(info.root, verify_cache=str(cache)))


def test_corrupt_cache_file_is_ignored(packages: PackageFactory, tmp_path: Path) -> None:
    cache = tmp_path / "c.json"
    cache.write_text("{not json")
    assert VerifyCache(str(cache)).get(str(cache)) is None
    report = certify_dir(packages.build("llama").root, verify_cache=str(cache))
    assert report.status == "passed" and report.cache_hits == 0
    assert "verify_cache_rejected" in codes(report)


class InterruptingProgress(CountingProgress):
    """Simulates Ctrl-C arriving while the files are being hashed."""

    def advance(self, amount: int) -> None:
        raise KeyboardInterrupt


def test_ctrl_c_during_hashing_gives_an_incomplete_report(packages: PackageFactory) -> None:
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.view import CertOptions

    info = packages.build("llama")
    report = certify_package(CertRequest(model=str(info.root), options=CertOptions()),
                             InterruptingProgress())
    assert report.status == "incomplete"
    note = next(f for f in report.findings if f.code == "check_not_run")
    assert "interrupted" in note.message
    assert "artifact_sha256_mismatch" not in codes(report)
    assert "artifact_sha256_unreadable" not in codes(report)


def test_file_growing_while_hashed_is_unreadable_not_verified(tmp_path: Path) -> None:
    target = tmp_path / "growing.gguf"
    target.write_bytes(b"x" * 1000)

    class Grower(CountingProgress):
        def advance(self, amount: int) -> None:
            with open(target, "ab") as handle:
                handle.write(b"more")

    result = hash_files([str(target)], progress=Grower())[str(target)]
    assert result.sha256 is None and "changed size" in (result.error or "")


def test_few_bytes_hash_in_the_calling_thread_many_bytes_on_a_pool(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    import meshcert.core.hashing as hashing

    threads: set[str] = set()
    real = hashing.sha256_file

    def spy(path: str, *args: Any, **kwargs: Any) -> str:
        threads.add(threading.current_thread().name)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(hashing, "sha256_file", spy)
    small = [tmp_path / f"s{i}.bin" for i in range(3)]
    for path in small:
        path.write_bytes(b"x" * 1000)
    got = hash_files([str(p) for p in small])
    assert threads == {threading.main_thread().name}
    assert {r.sha256 for r in got.values()} == {hashlib.sha256(b"x" * 1000).hexdigest()}
    threads.clear()
    big = [tmp_path / f"b{i}.bin" for i in range(2)]
    for path in big:
        path.write_bytes(b"y" * (hashing.SMALL_TOTAL_BYTES // 2 + 1))
    hash_files([str(p) for p in big])
    assert threads and threading.main_thread().name not in threads
