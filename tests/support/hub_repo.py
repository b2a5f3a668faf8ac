"""The fake Hub's content: repos at commits, branches, tags and PR refs, LFS and git blobs.

Kept apart from the HTTP side (hub_server.py). Files whose name matches `lfs` (by default
`*.gguf`) are stored as LFS: listed with their sha256, served from a storage origin.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

LFS_POINTER = "version https://git-lfs.github.com/spec/v1\noid sha256:{oid}\nsize {size}\n"


def git_blob_id(content: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


@dataclass
class StoredFile:
    """A file at one commit, as listed; `key` names the bytes actually served."""

    path: str
    size: int
    blob_id: str
    key: str
    lfs_sha256: str | None = None
    pointer_size: int | None = None

    def sibling(self, blobs: bool) -> dict[str, Any]:
        out: dict[str, Any] = {"rfilename": self.path}
        if blobs:
            out |= {"size": self.size, "blobId": self.blob_id}
            if self.lfs_sha256:
                out["lfs"] = {"sha256": self.lfs_sha256, "size": self.size,
                              "pointerSize": self.pointer_size}
        return out

    def tree_entry(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "file", "oid": self.blob_id, "size": self.size,
                               "path": self.path}
        if self.lfs_sha256:
            out["lfs"] = {"oid": self.lfs_sha256, "size": self.size,
                          "pointerSize": self.pointer_size}
        return out


@dataclass
class Commit:
    sha: str
    files: dict[str, StoredFile]
    parent: str | None = None


@dataclass
class FakeRepo:
    repo_id: str
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    pulls: list[str] = field(default_factory=list)  # refs/pr/<n+1>
    converts: dict[str, str] = field(default_factory=dict)
    gated: Literal[False, "auto", "manual"] = False
    disabled: bool = False
    required_token: str | None = None  # requests without "Bearer <token>" get a bare 401
    gated_access: set[str] = field(default_factory=set)  # tokens that may read a gated repo
    model_info_siblings: bool = True  # False: model_info omits siblings (tree fallback)

    def resolve(self, rev: str | None) -> str | None:
        """Branch, tag, refs/heads|tags/..., refs/pr/N, refs/convert/X, full or short SHA."""
        if rev is None:
            return self.branches.get("main")
        if rev in self.branches:
            return self.branches[rev]
        if rev in self.tags:
            return self.tags[rev]
        for prefix, names in (("refs/heads/", self.branches), ("refs/tags/", self.tags),
                              ("refs/convert/", self.converts)):
            if rev.startswith(prefix) and rev[len(prefix):] in names:
                return names[rev[len(prefix):]]
        if rev.startswith("refs/pr/") and rev[8:].isdigit():
            n = int(rev[8:])
            return self.pulls[n - 1] if 1 <= n <= len(self.pulls) else None
        low = rev.lower()
        if low in self.commits:
            return low
        if len(low) >= 7 and all(c in "0123456789abcdef" for c in low):
            matches = [sha for sha in self.commits if sha.startswith(low)]
            if len(matches) == 1:
                return matches[0]
        return None


class HubStore:
    """Repos and the blobs behind them; thread-safe."""

    def __init__(self) -> None:
        self.repos: dict[str, FakeRepo] = {}
        self.blobs: dict[str, bytes] = {}
        self._lock = threading.RLock()
        self._counter = 0

    def create_repo(self, repo_id: str) -> FakeRepo:
        with self._lock:
            return self.repos.setdefault(repo_id, FakeRepo(repo_id))

    def commit(self, repo_id: str, files: Mapping[str, bytes], *, branch: str | None = "main",
               lfs: Callable[[str], bool] | None = None, replace_all: bool = True) -> str:
        """Store `files` as a new commit (on `branch`, created or moved); return its SHA."""
        is_lfs = lfs or (lambda path: path.lower().endswith(".gguf"))
        with self._lock:
            repo = self.create_repo(repo_id)
            parent = repo.branches.get(branch) if branch else None
            stored = {} if replace_all or parent is None else dict(repo.commits[parent].files)
            for path, content in files.items():
                stored[path] = self._store(path, content, is_lfs(path))
            self._counter += 1
            digest = hashlib.sha1(f"{repo_id}\0{parent}\0{self._counter}".encode())
            for path in sorted(stored):
                digest.update(f"{path}\0{stored[path].blob_id}\n".encode())
            sha = digest.hexdigest()
            repo.commits[sha] = Commit(sha, stored, parent)
            if branch:
                repo.branches[branch] = sha
            return sha

    def _store(self, path: str, content: bytes, lfs: bool) -> StoredFile:
        if lfs:
            sha256 = hashlib.sha256(content).hexdigest()
            pointer = LFS_POINTER.format(oid=sha256, size=len(content)).encode()
            self.blobs[sha256] = content
            return StoredFile(path, len(content), git_blob_id(pointer), sha256, sha256,
                              len(pointer))
        blob_id = git_blob_id(content)
        self.blobs[blob_id] = content
        return StoredFile(path, len(content), blob_id, blob_id)

    def publish_dir(self, repo_id: str, root: str | os.PathLike[str], *,
                    branch: str | None = "main", lfs: Callable[[str], bool] | None = None) -> str:
        """Commit every file under `root` (a generated package) and return the commit SHA."""
        base = Path(root)
        files = {p.relative_to(base).as_posix(): p.read_bytes()
                 for p in sorted(base.rglob("*")) if p.is_file()}
        return self.commit(repo_id, files, branch=branch, lfs=lfs)

    def tag(self, repo_id: str, name: str, sha: str) -> None:
        with self._lock:
            self.repos[repo_id].tags[name] = sha

    def open_pull_request(self, repo_id: str, sha: str) -> str:
        with self._lock:
            repo = self.repos[repo_id]
            repo.pulls.append(sha)
            return f"refs/pr/{len(repo.pulls)}"

    def tamper(self, repo_id: str, rev: str, path: str, *, offset: int = -1) -> None:
        """Flip one byte of the content served for `path`; the listing (size, LFS sha256, blob
        id) stays as it was, as if storage had been corrupted behind the Hub's metadata."""
        with self._lock:
            repo = self.repos[repo_id]
            sha = repo.resolve(rev)
            assert sha is not None
            stored = repo.commits[sha].files[path]
            data = bytearray(self.blobs[stored.key])
            data[offset] ^= 0xFF
            self._counter += 1
            key = f"tampered-{self._counter}"
            self.blobs[key] = bytes(data)
            stored.key = key

    def file_bytes(self, repo_id: str, rev: str, path: str) -> bytes:
        repo = self.repos[repo_id]
        sha = repo.resolve(rev)
        assert sha is not None
        return self.blobs[repo.commits[sha].files[path].key]
