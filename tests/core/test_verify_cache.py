"""The verify cache answers only with what this user's meshcert wrote for the same file of the
same package: every entry is MAC'd under a per-user secret key (0600 in the user cache dir),
so an edited, copied or foreign entry, or a file that is not the cache, is a miss."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from meshcert.core.cache_paths import VERIFY_KEY, cache_root
from meshcert.core.verify_cache import FORMAT, KeyUnavailable, VerifyCache, secret_key

KEY = b"k" * 32


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.gguf", tmp_path / "b.gguf"
    a.write_bytes(b"alpha")
    b.write_bytes(b"bravo")
    return a, b


def written(path: Path, *entries: tuple[Path, str], package: str = "pkg") -> Path:
    cache = VerifyCache(str(path), package=package, key=KEY)
    for file, digest in entries:
        cache.put(str(file), digest)
    cache.save()
    return path


def entries(path: Path) -> dict[str, list[str]]:
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT
    return data["entries"]


def rewrite(path: Path, new: dict[str, list[str]]) -> None:
    path.write_text(json.dumps({"format": FORMAT, "entries": new}))


def test_what_was_written_is_found_for_the_same_file_and_package(
        files: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64))
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert cache.get(str(a)) == "d" * 64 and cache.hits == 1 and cache.problems == []


def test_an_edited_digest_is_a_miss_and_a_problem(files: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    a, _ = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64))
    rewrite(cache_file, {name: ["e" * 64, mac] for name, (_, mac) in entries(cache_file).items()})
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert cache.get(str(a)) is None
    assert "1 of 1 entries fail their MAC" in cache.problems[0]


def test_an_entry_rekeyed_to_a_tampered_files_new_stat_is_a_miss(
        files: tuple[Path, Path], tmp_path: Path) -> None:
    """The attack of issue 41: flip a byte, then move the entry to the file's new stat."""
    a, _ = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64))
    a.write_bytes(b"alphA")
    st = a.stat()
    (old_name, value), = entries(cache_file).items()
    fields = json.loads(old_name)
    fields[2:] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    rewrite(cache_file, {json.dumps(fields): value})
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert cache.get(str(a)) is None and cache.problems


def test_an_entry_copied_to_another_files_key_is_a_miss(files: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    a, b = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64), (b, "f" * 64))
    by_path = {json.loads(n)[1]: (n, v) for n, v in entries(cache_file).items()}
    name_b = by_path[str(b.resolve())][0]
    rewrite(cache_file, {by_path[str(a.resolve())][0]: by_path[str(a.resolve())][1],
                         name_b: by_path[str(a.resolve())][1]})  # a's digest and MAC on b
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert cache.get(str(a)) == "d" * 64
    assert cache.get(str(b)) is None
    assert "1 of 2 entries fail their MAC" in cache.problems[0]


def test_another_packages_entries_are_never_found(files: tuple[Path, Path],
                                                  tmp_path: Path) -> None:
    a, _ = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64), package="other")
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert cache.get(str(a)) is None and cache.problems == []  # a miss, not tampering
    # ... and renaming the entry to this package breaks its MAC
    rewrite(cache_file, {n.replace('"other"', '"pkg"'): v
                         for n, v in entries(cache_file).items()})
    renamed = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert renamed.get(str(a)) is None and renamed.problems


def test_another_key_makes_every_entry_a_miss(files: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    a, _ = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64))
    cache = VerifyCache(str(cache_file), package="pkg", key=b"x" * 32)
    assert cache.get(str(a)) is None and cache.problems


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '{"/a|1|2|3|4": "' + "d" * 64 + '"}',
                                  '{"format": "' + FORMAT + '", "entries": [1]}'])
def test_a_file_that_is_not_this_cache_is_a_problem_and_a_miss(
        files: tuple[Path, Path], tmp_path: Path, text: str) -> None:
    a, _ = files
    cache_file = tmp_path / "c.json"
    cache_file.write_text(text)
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY)
    assert cache.get(str(a)) is None
    assert len(cache.problems) == 1 and "ignored, every file hashed" in cache.problems[0]
    cache.put(str(a), "d" * 64)
    cache.save()  # the next run starts from a clean cache
    assert VerifyCache(str(cache_file), package="pkg", key=KEY).get(str(a)) == "d" * 64


def test_lookups_off_writes_but_never_reads(files: tuple[Path, Path], tmp_path: Path) -> None:
    a, _ = files
    cache_file = written(tmp_path / "c.json", (a, "d" * 64))
    cache = VerifyCache(str(cache_file), package="pkg", key=KEY, lookups=False)
    assert cache.get(str(a)) is None and cache.hits == 0


def test_the_key_is_made_once_private_in_the_user_cache_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    first = secret_key()
    path = cache_root() / VERIFY_KEY
    assert path.is_file() and len(first) == 32
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert secret_key() == first
    assert [p.name for p in path.parent.iterdir()] == [VERIFY_KEY]  # no temp file left


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_key_others_may_read_is_not_used(tmp_path: Path, files: tuple[Path, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    secret_key()
    (cache_root() / VERIFY_KEY).chmod(0o644)
    with pytest.raises(KeyUnavailable, match="may be read or written by others"):
        secret_key()
    a, _ = files
    cache = VerifyCache(str(tmp_path / "c.json"))
    cache.put(str(a), "d" * 64)
    cache.save()
    assert cache.get(str(a)) is None and not (tmp_path / "c.json").exists()
    assert "not used" in cache.problems[0]
