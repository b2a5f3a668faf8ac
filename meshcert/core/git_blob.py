"""git's blob id of a file's bytes: SHA-1 of `blob <length>\\0` + the bytes (what `git hash-object`
prints, what the Hub lists as a plain-git file's `blob_id`/oid, in-toto's `gitBlob` digest)."""

from __future__ import annotations

import hashlib


def git_blob_id(data: bytes) -> str:
    """Lower-case hex; for example `git_blob_id(b"")` is e69de29b... (git's empty blob)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
