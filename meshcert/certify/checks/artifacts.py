"""Artifact entries and the files behind them: safe paths, declared sizes and hashes, what is
on disk (or on the Hub), and .gguf files nobody declared."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from meshcert.certify.checks import MANIFEST_READ, register
from meshcert.certify.manifest_model import ArtifactEntry, is_int
from meshcert.certify.paths import unsafe_path_reason
from meshcert.certify.view import PackageView
from meshcert.core.file_facts import FileFact
from meshcert.core.findings import Finding, finding

HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


def _where(entry: ArtifactEntry) -> str:
    return entry.path if isinstance(entry.path, str) else entry.label


@register("artifact_entries", order=30, codes=[
    "unsafe_artifact_path", "empty_artifact", "invalid_tensor_bytes", "invalid_artifact_sha256",
    "invalid_manifest_field", "duplicate_artifact_path",
], formats=["v1"])
def artifact_entries(view: PackageView) -> Iterator[Finding]:
    """Rules on each declared entry, before looking at any file."""
    entries = view.artifacts()
    for entry in entries:
        where, li = _where(entry), entry.layer_index
        reason = unsafe_path_reason(entry.path)
        if reason:
            yield finding("unsafe_artifact_path", f"{entry.label}: {reason} ({entry.path!r})",
                          path=where if isinstance(entry.path, str) else None, layer_index=li)
        size = entry.raw.get("artifact_bytes")
        if not is_int(size) or size <= 0:
            yield finding("empty_artifact",
                          f"{entry.label}: artifact_bytes must be an integer > 0, found {size!r}",
                          path=where, layer_index=li)
        yield from _tensor_fields(entry, where, li)
        sha = entry.raw.get("sha256")
        if not isinstance(sha, str) or not HEX64.match(sha):
            yield finding("invalid_artifact_sha256",
                          f"{entry.label}: sha256 must be 64 hex characters, found {sha!r}",
                          path=where, layer_index=li)
    paths = Counter(e.path for e in entries if isinstance(e.path, str))
    for path, n in sorted(paths.items()):
        if n > 1:
            yield finding("duplicate_artifact_path", f"{n} artifact entries name {path!r}",
                          path=path)


def _tensor_fields(entry: ArtifactEntry, where: str, li: int | None) -> Iterator[Finding]:
    count, nbytes = entry.raw.get("tensor_count"), entry.raw.get("tensor_bytes")
    ok = True
    for name, value in (("tensor_count", count), ("tensor_bytes", nbytes)):
        if not is_int(value) or value < 0:
            ok = False
            yield finding("invalid_manifest_field",
                          f"{entry.label}: {name} must be a non-negative integer, found {value!r}",
                          path=where, layer_index=li)
    if ok and (count == 0) != (nbytes == 0):
        yield finding("invalid_tensor_bytes",
                      f"{entry.label}: tensor_bytes is {nbytes} with tensor_count {count} "
                      "(tensor_bytes must be 0 exactly when tensor_count is 0)",
                      path=where, layer_index=li)


_KIND_MESSAGES = {
    "directory": "is a directory",
    "special": "is not a regular file (FIFO, socket or device)",
    "link_outside": "is a link leaving the package",
}


@register("artifact_files", order=31, codes=[
    "missing_artifact", "artifact_not_file", "artifact_size_mismatch", "artifact_sha256_mismatch",
    "artifact_sha256_unreadable", "artifact_hard_link",
])
def artifact_files(view: PackageView) -> Iterator[Finding]:
    """Compare each declared entry with what the source found for its path."""
    seen: set[str] = set()
    for entry in view.artifacts():
        path = entry.path
        if not isinstance(path, str) or path in seen or path not in view.files:
            continue
        seen.add(path)
        yield from _file_findings(entry, view.files[path])


def _file_findings(entry: ArtifactEntry, fact: FileFact) -> Iterator[Finding]:
    path, li = fact.path, entry.layer_index
    if fact.kind == "missing":
        detail = f" ({fact.detail})" if fact.detail else ""
        yield finding("missing_artifact", f"{entry.label}: {path} does not exist{detail}",
                      path=path, layer_index=li)
        return
    if fact.kind in _KIND_MESSAGES:
        detail = f": {fact.detail}" if fact.detail else ""
        yield finding("artifact_not_file", f"{entry.label}: {path} {_KIND_MESSAGES[fact.kind]}"
                      f"{detail}", path=path, layer_index=li)
        return
    if fact.kind == "unreadable":
        yield finding("artifact_sha256_unreadable", f"{entry.label}: {path} cannot be read: "
                      f"{fact.detail}", path=path, layer_index=li)
        return
    declared = entry.declared_size
    if declared is not None and fact.size is not None and declared != fact.size:
        yield finding("artifact_size_mismatch",
                      f"{entry.label}: {path} is {fact.size} bytes, the manifest says {declared}",
                      path=path, layer_index=li)
    if fact.hard_links > 1:
        yield finding("artifact_hard_link", f"{entry.label}: {path} has {fact.hard_links} hard "
                      "links; it may share storage with a file outside the package",
                      path=path, layer_index=li)
    if fact.sha256_error:
        yield finding("artifact_sha256_unreadable",
                      f"{entry.label}: {path} could not be hashed: {fact.sha256_error}",
                      path=path, layer_index=li)
        return
    expected = entry.declared_sha256()
    if fact.sha256 is not None and expected is not None and HEX64.match(expected) \
            and fact.sha256.lower() != expected:
        cached = " (digest from the verification cache)" if fact.hash_cached else ""
        yield finding("artifact_sha256_mismatch",
                      f"{entry.label}: {path} hashes to {fact.sha256}, the manifest says "
                      f"{expected}{cached}", path=path, layer_index=li)


@register("undeclared_artifacts", order=32, codes=["undeclared_artifact"],
          runs_when=[MANIFEST_READ])
def undeclared_artifacts(view: PackageView) -> Iterator[Finding]:
    if view.manifest is None or view.listing is None:
        return
    declared = {e.path for e in view.artifacts() if isinstance(e.path, str)}
    for path in view.listing:
        if path.lower().endswith(".gguf") and path not in declared:
            yield finding("undeclared_artifact",
                          f"{path} is in the package but no manifest entry names it", path=path)
