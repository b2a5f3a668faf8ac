"""`--verify-cache`: digests this user's meshcert computed, each tied to what wrote it.

An entry says "the file at this path, of this package, with this size, mtime, ctime and inode,
hashed to this SHA-256". Each entry carries an HMAC-SHA256 over all of that, under a per-user
secret key kept (mode 0600) in the user cache dir (`meshcert.core.cache_paths.VERIFY_KEY`).
So an entry edited by hand (a digest, or a stat re-keyed to a tampered file), an entry's digest
copied to another file's key, or an entry of another package is a miss: the file is hashed
again, never passed. A file that is not this cache (not JSON, another shape, entries without a
MAC from an older meshcert) is a miss too, and a `problem` the certifier reports.

What the MAC does not protect against: anyone who can read the key file (this user, root) can
write entries that verify. That is why a signed certification never reads the cache
(meshcert.certify.service) and an attestation signs no digest that came from one.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from pathlib import Path

from meshcert.core.errors import ErrorKind, MeshcertError

FORMAT = "meshcert-verify-cache/2"
KEY_BYTES = 32


class KeyUnavailable(MeshcertError):
    """The secret key cannot be read or made (the message says why): the cache is not used,
    never an error of the run."""

    kind = ErrorKind.INCOMPLETE


def key_path() -> Path:
    from meshcert.core.cache_paths import VERIFY_KEY, cache_root

    return cache_root() / VERIFY_KEY


def secret_key(path: Path | None = None) -> bytes:
    """The per-user key, made on first use (mode 0600); KeyUnavailable when it cannot be read
    or made, or when others than its owner may read or write it."""
    path = path or key_path()
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(secrets.token_bytes(KEY_BYTES))
            with contextlib.suppress(FileExistsError):  # never replace another process's key
                os.link(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        return _read_key(path)
    except OSError as exc:
        raise KeyUnavailable(f"cannot make the cache key {path}: {exc.strerror or exc}"
                             ) from None


def _read_key(path: Path) -> bytes:
    try:
        with open(path, "rb") as handle:
            info = os.fstat(handle.fileno())
            data = handle.read(KEY_BYTES + 1)
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise KeyUnavailable(f"cannot read the cache key {path}: {exc.strerror or exc}"
                             ) from None
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyUnavailable(f"the cache key {path} may be read or written by others (mode "
                             f"{stat.S_IMODE(info.st_mode):o}, not 600)")
    if len(data) != KEY_BYTES:
        raise KeyUnavailable(f"the cache key {path} is not a {KEY_BYTES}-byte key")
    return data


def stat_key(path: str) -> tuple[str, int, int, int, int]:
    """(real path, size, mtime_ns, ctime_ns, inode); OSError when the file cannot be stat'ed."""
    st = os.stat(path)
    return os.path.realpath(path), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


class VerifyCache:
    """Remembers computed digests keyed on (package, path, size, mtime_ns, ctime_ns, inode).

    `package` is the identity of the package the files belong to (the certifier gives its
    manifest's SHA-256): a digest is only ever found for the package it was computed for.
    It stores what the content hashed to, never a verdict: a cached digest is still compared
    against the manifest. `lookups=False`: the cache is written, never read. `key`: the secret
    (default: this user's, `secret_key()`); without one every lookup misses and nothing is
    saved.
    """

    def __init__(self, path: str | None, *, package: str = "", lookups: bool = True,
                 key: bytes | None = None) -> None:
        self._path = path
        self._package = package
        self._lookups = lookups
        self._entries: dict[str, list[str]] = {}
        self._lock = threading.Lock()
        self.problems: list[str] = []  # why (some of) the file was not used
        self.hits = 0
        self._key = key
        if self._key is None:
            try:
                self._key = secret_key()
            except KeyUnavailable as exc:
                self.problems.append(f"{exc}: the verify cache is not used")
        if path and os.path.isfile(path) and self._key is not None:
            self._load(path)

    def _load(self, path: str) -> None:
        try:
            with open(path, encoding="utf-8") as handle:
                loaded = json.load(handle)
        except (OSError, ValueError, RecursionError) as exc:
            why = exc.strerror if isinstance(exc, OSError) else "it is not JSON"
            self.problems.append(f"{path}: {why}: ignored, every file hashed")
            return
        entries = loaded.get("entries") if isinstance(loaded, dict) else None
        if not isinstance(loaded, dict) or loaded.get("format") != FORMAT \
                or not isinstance(entries, dict):
            self.problems.append(f"{path} is not a {FORMAT} file (an older meshcert's cache, "
                                 "or another file): ignored, every file hashed")
            return
        rejected = 0
        for name, value in entries.items():
            if isinstance(value, list) and len(value) == 2 \
                    and all(isinstance(v, str) for v in value) \
                    and hmac.compare_digest(value[1], self._mac(name, value[0])):
                self._entries[name] = value
            else:
                rejected += 1
        if rejected:
            self.problems.append(
                f"{path}: {rejected} of {len(entries)} entries fail their MAC (edited, copied "
                "between files, or written under another key): ignored, those files hashed")

    def _name(self, path: str) -> str:
        real, size, mtime, ctime, inode = stat_key(path)
        return json.dumps([self._package, real, size, mtime, ctime, inode])

    def _mac(self, name: str, digest: str) -> str:
        assert self._key is not None
        return hmac.new(self._key, f"{FORMAT}\n{name}\n{digest}".encode(),
                        hashlib.sha256).hexdigest()

    def get(self, path: str) -> str | None:
        if not self._lookups or self._key is None:
            return None
        try:
            name = self._name(path)
        except OSError:
            return None
        with self._lock:
            entry = self._entries.get(name)
            if entry is None:
                return None
            self.hits += 1
            return entry[0]

    def put(self, path: str, digest: str) -> None:
        if self._key is None:
            return
        try:
            name = self._name(path)
        except OSError:
            return
        with self._lock:
            self._entries[name] = [digest, self._mac(name, digest)]

    def save(self) -> None:
        if not self._path or self._key is None:
            return
        from meshcert.core.atomic import write_atomic

        with self._lock:
            text = json.dumps({"format": FORMAT, "entries": self._entries})
        write_atomic(self._path, text)
