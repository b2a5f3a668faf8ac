"""Artifact path safety (pure). A consumer must reject any path that could leave the package."""

from __future__ import annotations

import re

_DRIVE = re.compile(r"^[A-Za-z]:")


def unsafe_path_reason(path: object) -> str | None:
    """Why `path` is not a safe package-relative path, or None when it is safe."""
    if not isinstance(path, str):
        return f"path must be a string, found {type(path).__name__}"
    if path == "":
        return "path is empty"
    if "\\" in path:
        return "path contains a backslash"
    if "\x00" in path or any(ord(c) < 0x20 for c in path):
        return "path contains a control character"
    if path.startswith("/"):
        return "path is absolute"
    if _DRIVE.match(path):
        return "path starts with a drive letter"
    for component in path.split("/"):
        if component == "":
            return "path has an empty component"
        if component in {".", ".."}:
            return f"path has a {component!r} component"
    return None
