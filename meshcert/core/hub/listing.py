"""Hub file listings as plain records, and the FileFacts the checks read (pure)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from meshcert.core.file_facts import FileFact

LFS_SIZES_FACT = "hub_lfs_sizes"  # PackageView.source_facts key: path -> LFS pointer size


@dataclass(frozen=True)
class RemoteFile:
    """One file of the repo at the resolved commit, as the Hub lists it."""

    path: str
    size: int | None
    blob_id: str | None = None  # git oid
    lfs_sha256: str | None = None  # the Hub's attested content sha256 (LFS/Xet files)
    lfs_size: int | None = None

    @property
    def is_lfs(self) -> bool:
        return self.lfs_sha256 is not None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _lower(value: Any) -> str | None:
    return value.lower() if isinstance(value, str) and value else None


def from_siblings(siblings: Iterable[Any] | None) -> list[RemoteFile] | None:
    """`model_info(files_metadata=True).siblings` -> records; None when sizes are missing
    (then the caller falls back to the tree listing)."""
    if siblings is None:
        return None
    out: list[RemoteFile] = []
    for sibling in siblings:
        size = _int(getattr(sibling, "size", None))
        if size is None:
            return None
        lfs = getattr(sibling, "lfs", None)
        out.append(RemoteFile(
            path=sibling.rfilename, size=size, blob_id=getattr(sibling, "blob_id", None),
            lfs_sha256=_lower(getattr(lfs, "sha256", None)) if lfs else None,
            lfs_size=_int(getattr(lfs, "size", None)) if lfs else None))
    return out


def from_tree(entries: Iterable[Any]) -> list[RemoteFile]:
    """`list_repo_tree(recursive=True)` entries (RepoFile / RepoFolder) -> records (files)."""
    out: list[RemoteFile] = []
    for entry in entries:
        if not hasattr(entry, "size") or not hasattr(entry, "blob_id"):
            continue  # a folder
        lfs = getattr(entry, "lfs", None)
        out.append(RemoteFile(
            path=entry.path, size=_int(entry.size), blob_id=entry.blob_id,
            lfs_sha256=_lower(getattr(lfs, "sha256", None)) if lfs else None,
            lfs_size=_int(getattr(lfs, "size", None)) if lfs else None))
    return out


def directories(paths: Iterable[str]) -> set[str]:
    """Every folder implied by the file paths ("a/b/c.gguf" -> {"a", "a/b"})."""
    out: set[str] = set()
    for path in paths:
        parts = path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            out.add("/".join(parts[:i]))
    return out


def fact_for(path: str, files: dict[str, RemoteFile], folders: set[str]) -> FileFact:
    """What the listing says about one declared artifact path."""
    remote = files.get(path)
    if remote is not None:
        return FileFact(path, "file", size=remote.size, lfs_sha256=remote.lfs_sha256,
                        is_lfs=remote.is_lfs)
    if path in folders:
        return FileFact(path, "directory", detail="a folder in the Hub repository")
    return FileFact(path, "missing", detail="not in the Hub repository at this commit")
