"""What a package source learned about one declared artifact path (pure data): the local source
and the Hub listing both produce these, and the checks read them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FileKind = Literal["file", "missing", "directory", "special", "link_outside", "unreadable"]


@dataclass(frozen=True)
class FileFact:
    """What the source learned about one declared artifact path."""

    path: str
    kind: FileKind
    size: int | None = None
    sha256: str | None = None  # computed from content (local or streamed), lower-case hex
    sha256_error: str | None = None  # why hashing failed, when it did
    hash_cached: bool = False  # sha256 came from the verification cache
    lfs_sha256: str | None = None  # attested by the Hub (LFS), lower-case hex
    is_lfs: bool | None = None  # None: not known (local package)
    hard_links: int = 1
    detail: str | None = None
