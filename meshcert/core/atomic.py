"""Write files atomically: a temp file in the same folder, then a rename.

A reader never sees a half-written report, and an interrupted write leaves the old file.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_atomic(path: str | os.PathLike[str], text: str) -> Path:
    """Write via a temp file in the same folder + rename; parent folders are created.
    (The temp file is created with `open(..., "x")`, so the result gets the usual umask mode.)"""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(tmp, "x", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target
