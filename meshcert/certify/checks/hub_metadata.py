"""What the Hub's own metadata says about the declared artifacts (hf:// views only).

The Hub listing gives each file's size and, for LFS/Xet files, the sha256 the Hub attests, all
without downloading. The generic artifact checks already compare the listed size with
`artifact_bytes` (artifact_size_mismatch) and a streamed digest with `sha256`
(artifact_sha256_mismatch); this check reports only what they cannot see, so one problem gives
one finding and a package certified locally and from the Hub gives the same findings:

- hub_artifact_missing: the declared path is not in the repo at the commit (the generic
  missing_artifact fires too);
- hub_sha256_mismatch: the Hub's LFS sha256 differs from the manifest (case-insensitive), unless
  a streamed digest already shows the same disagreement;
- hub_size_mismatch: the LFS pointer declares another size than the manifest while the listed
  size does not show it (the Hub contradicting itself);
- hub_artifact_not_lfs (warning): the file is plain git, so the Hub attests no sha256 for it
  (not for a publisher file: the source reads those whole and hashes them itself).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, applicable, register
from meshcert.certify.manifest_model import ArtifactEntry
from meshcert.certify.view import PackageView
from meshcert.core.file_facts import FileFact
from meshcert.core.findings import Finding, finding
from meshcert.core.hub.listing import LFS_SIZES_FACT

HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")


@register("hub_metadata", order=35, codes=[
    "hub_artifact_missing", "hub_size_mismatch", "hub_sha256_mismatch", "hub_artifact_not_lfs",
], runs_when=[applicable(lambda view: view.ref.kind == "hf", "a local directory has no Hub "
                         "metadata (runs on hf:// packages)"), MANIFEST_READ])
def hub_metadata(view: PackageView) -> Iterator[Finding]:
    if view.ref.kind != "hf" or view.manifest is None:
        return
    lfs_sizes: dict[str, Any] = view.source_facts.get(LFS_SIZES_FACT) or {}
    seen: set[str] = set()
    for entry in view.artifacts():
        path = entry.path
        if not isinstance(path, str) or path in seen or path not in view.files:
            continue
        seen.add(path)
        yield from _entry_findings(entry, view.files[path], lfs_sizes.get(path))


def _entry_findings(entry: ArtifactEntry, fact: FileFact, lfs_size: Any) -> Iterator[Finding]:
    path, li = fact.path, entry.layer_index
    if fact.kind == "missing":
        yield finding("hub_artifact_missing", f"{entry.label}: {path} is not in the Hub "
                      "repository at the certified commit", path=path, layer_index=li)
        return
    if fact.kind != "file":
        return
    declared = entry.declared_size
    listed_agrees = fact.size is None or fact.size == declared
    if declared is not None and isinstance(lfs_size, int) and lfs_size != declared \
            and listed_agrees:
        yield finding("hub_size_mismatch", f"{entry.label}: the Hub's LFS pointer for {path} "
                      f"declares {lfs_size} bytes, the manifest says {declared}",
                      path=path, layer_index=li)
    expected = entry.declared_sha256()
    attested = fact.lfs_sha256.lower() if fact.lfs_sha256 else None
    if attested is not None and expected is not None and HEX64.match(expected) \
            and attested != expected:
        streamed = fact.sha256.lower() if fact.sha256 else None
        if streamed != attested:  # else artifact_sha256_mismatch already says it
            yield finding("hub_sha256_mismatch", f"{entry.label}: the Hub attests sha256 "
                          f"{attested} for {path}, the manifest says {expected}",
                          path=path, layer_index=li)
    if fact.is_lfs is False and not (entry.role == "publisher" and fact.sha256):
        yield finding("hub_artifact_not_lfs", f"{entry.label}: {path} is stored as a plain git "
                      "file, so the Hub attests no sha256 for it", path=path, layer_index=li)
