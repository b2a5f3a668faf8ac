"""Parse the MODEL argument into a package ref (pure: no I/O beyond nothing at all)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from meshcert.core.errors import ErrorKind, MeshcertError

HF_SCHEME = "hf://"
_REPO_PART = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")


@dataclass(frozen=True)
class PackageRef:
    kind: Literal["local", "hf"]
    text: str
    local_path: str | None = None
    repo: str | None = None
    revision: str | None = None


class RefError(MeshcertError, ValueError):
    """The MODEL argument is not a package ref; `code` is the finding code."""

    kind = ErrorKind.USAGE

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def parse_ref(text: str) -> PackageRef:
    """Classify MODEL: an hf:// ref or a local path. Raises RefError for what is no package.

    Rules (package.md): text after '@', or after the last ':', is the revision; the repo is
    exactly `namespace/name`; a direct .gguf path is not a package.
    """
    raw = text.strip()
    if not raw:
        raise RefError("invalid_package_ref", "the package ref is empty")
    if raw.lower().endswith(".gguf"):
        raise RefError(
            "direct_gguf_input",
            f"{text!r} is a GGUF file, not a layer package: certify the package directory or "
            "its hf:// ref",
        )
    if raw.startswith(HF_SCHEME):
        return _parse_hf(raw)
    if "://" in raw:
        raise RefError("invalid_package_ref", f"unsupported scheme in {text!r}: use hf:// or a "
                       "local directory")
    return PackageRef(kind="local", text=text, local_path=raw)


def _parse_hf(raw: str) -> PackageRef:
    body = raw[len(HF_SCHEME):]
    revision: str | None = None
    if "@" in body:
        body, revision = body.split("@", 1)
    elif ":" in body:
        body, revision = body.rsplit(":", 1)
    if revision is not None and not revision.strip():
        raise RefError("invalid_package_ref", f"{raw!r} has an empty revision")
    parts = body.split("/")
    if len(parts) != 2 or not all(_REPO_PART.match(p) for p in parts):
        raise RefError(
            "invalid_package_ref",
            f"{raw!r}: the repo must be exactly namespace/name (got {body!r})",
        )
    if any(p in {".", ".."} or ".." in p for p in parts):
        raise RefError("invalid_package_ref", f"{raw!r}: '..' is not allowed in a repo id")
    return PackageRef(kind="hf", text=raw, repo=body, revision=revision)


def is_full_sha(revision: str | None) -> bool:
    return revision is not None and bool(FULL_SHA.match(revision.lower()))
