"""What a publish uploads and in which commits: pure functions over the local certification's
facts and the target's listing.

Limits (the Hub's, as huggingface_hub 2.4 and the Hub docs state them):
- a file may be at most 50 GB (`HfApi.upload_file`: "up to 50 GB"; Hub storage limits: "per
  file: 50GB max, 20GB recommended"): a larger artifact is refused before anything is sent;
- a commit should hold fewer than 100 files (Hub docs, "Repository limitations and
  recommendations": "Commit size <100 files ... upload files in multiple commits");
  huggingface_hub itself sends at most 256 files per preupload / LFS batch request
  (`PREUPLOAD_BATCH_SIZE`, `UPLOAD_BATCH_MAX_NUM_FILES`), so 50 stays well inside both;
- bytes per commit have no Hub limit (LFS content is not in the commit payload); the budget
  here (16 GiB: two artifacts of the writers' default 8 GiB part size) bounds how much is
  uploaded but not yet committed when a run stops, so a re-run has little to redo.
Both batch sizes are parameters; tests force several commits with small ones.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

MAX_FILE_BYTES = 50 * 1000**3
DEFAULT_MAX_FILES_PER_COMMIT = 50
DEFAULT_MAX_BYTES_PER_COMMIT = 16 * 1024**3
MANIFEST = "model-package.json"
README = "README.md"
KEPT_REMOTE = frozenset({MANIFEST, README, ".gitattributes"})


def git_blob_id(content: bytes) -> str:
    """The git oid the Hub lists for a regular (non-LFS) file."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


# the Hub may store a small artifact (a publisher file, metadata/*.json) as a regular git file,
# listed by its git blob id and no LFS sha256; up to this size that id is taken locally too
SMALL_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class LocalFile:
    """One artifact to publish: its certified sha256 and the stat it was certified with."""

    path: str  # in the package and in the repo
    local_path: str
    size: int
    sha256: str
    stat_key: tuple[int, int, int, int]  # (size, mtime_ns, ctime_ns, inode)
    git_blob_id: str | None = None  # a small file: its git oid (see SMALL_FILE_BYTES)


def local_file(path: str, local_path: str, size: int, sha256: str,
               key: tuple[int, int, int, int]) -> LocalFile:
    """A LocalFile, with its git blob id when it is small enough to be a regular file."""
    blob = None
    if size <= SMALL_FILE_BYTES:
        with open(local_path, "rb") as handle:
            content = handle.read(SMALL_FILE_BYTES + 1)
        if hashlib.sha256(content).hexdigest() == sha256:  # the certified bytes
            blob = git_blob_id(content)
    return LocalFile(path, local_path, size, sha256, key, blob)


@dataclass(frozen=True)
class RemoteFile:
    path: str
    size: int | None
    blob_id: str | None
    lfs_sha256: str | None


def stat_key(path: str) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino


def same_content(local: LocalFile, remote: RemoteFile | None) -> bool:
    """An artifact is on the target already when the Hub attests the same sha256 and size
    (LFS), or, stored as a regular file, lists the same git blob id."""
    if remote is None:
        return False
    if remote.lfs_sha256 is None:
        return local.git_blob_id is not None and remote.blob_id == local.git_blob_id
    return remote.lfs_sha256 == local.sha256 and remote.size == local.size


def same_bytes(content: bytes, remote: RemoteFile | None) -> bool:
    """A small regular file (manifest, card) is there already: same git blob id."""
    if remote is None:
        return False
    if remote.lfs_sha256 is not None:
        return remote.lfs_sha256 == hashlib.sha256(content).hexdigest()
    return remote.blob_id == git_blob_id(content)


def batches(files: Iterable[LocalFile], max_files: int, max_bytes: int) -> list[list[LocalFile]]:
    """Consecutive groups of at most `max_files` files and `max_bytes` bytes (a single file
    larger than `max_bytes` gets a commit of its own)."""
    if max_files <= 0 or max_bytes <= 0:
        raise ValueError("batch limits must be positive")
    out: list[list[LocalFile]] = []
    current: list[LocalFile] = []
    size = 0
    for item in files:
        if current and (len(current) >= max_files or size + item.size > max_bytes):
            out.append(current)
            current, size = [], 0
        current.append(item)
        size += item.size
    if current:
        out.append(current)
    return out


def missing(files: Iterable[LocalFile], remote: Mapping[str, RemoteFile]) -> list[LocalFile]:
    return [f for f in files if not same_content(f, remote.get(f.path))]


def stale(remote: Mapping[str, RemoteFile], declared: Iterable[str]) -> list[str]:
    """GGUF files on the target that the new manifest does not declare (left over from an
    earlier package): removed in the commit that adds the new manifest."""
    keep = set(declared) | KEPT_REMOTE
    return sorted(p for p in remote if p not in keep and p.lower().endswith(".gguf"))
