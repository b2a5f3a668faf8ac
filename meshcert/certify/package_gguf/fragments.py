"""Pure helpers joining manifest artifact entries with the GGUF headers a source read.

Every GGUF check starts from here, so each one tolerates the same things the same way: no
manifest, a manifest whose entries are malformed, artifacts that were never read (missing,
unsafe path, not a file) and headers that failed to parse (HeaderProblem) are simply skipped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from meshcert.certify.manifest_model import ArtifactEntry
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem

METADATA_ROLE = "shared.metadata"
PROJECTOR_ROLE = "projector"
FILE_ROLE = "file"  # a GGUF inspected on its own, outside any package


@dataclass(frozen=True)
class Fragment:
    """A declared artifact whose GGUF header was read successfully."""

    artifact: ArtifactEntry
    path: str
    header: GGUFHeader

    @property
    def role(self) -> str:
        return self.artifact.role

    @property
    def layer_index(self) -> int | None:
        return self.artifact.layer_index

    def tensor_names(self) -> list[str]:
        return [t.name for t in self.header.tensors]


Declared = tuple[ArtifactEntry, str, GGUFHeader | HeaderProblem]


def declared_headers(view: PackageView) -> list[Declared]:
    """(entry, path, header-or-error) for every declared artifact with a header, each path once.

    A standalone view (`meshcert models inspect` of bare GGUF files, no manifest) declares
    every header it read, as a plain "file" entry with no layer."""
    if view.standalone and view.manifest is None:
        return [(ArtifactEntry(FILE_ROLE, i, {"path": path}), path, header)
                for i, (path, header) in enumerate(view.headers.items())]
    out: list[Declared] = []
    seen: set[str] = set()
    for artifact in view.artifacts():
        path = artifact.path
        if not isinstance(path, str) or path in seen or path not in view.headers:
            continue
        seen.add(path)
        out.append((artifact, path, view.headers[path]))
    return out


def fragments(view: PackageView, *, projectors: bool = False) -> list[Fragment]:
    """Readable fragments in manifest order; projectors (not owned model tensors) on request."""
    return [Fragment(artifact, path, header)
            for artifact, path, header in declared_headers(view)
            if isinstance(header, GGUFHeader) and (projectors or artifact.role != PROJECTOR_ROLE)]


def reference_fragment(frags: list[Fragment]) -> Fragment | None:
    """The fragment whose metadata speaks for the package: shared/metadata.gguf when readable."""
    for frag in frags:
        if frag.role == METADATA_ROLE:
            return frag
    return frags[0] if frags else None


def package_architecture(frags: list[Fragment]) -> str | None:
    """general.architecture of the metadata fragment, else the most common one among fragments."""
    ref = reference_fragment(frags)
    if ref is not None and ref.header.architecture is not None:
        return ref.header.architecture
    archs = Counter(f.header.architecture for f in frags if f.header.architecture is not None)
    return archs.most_common(1)[0][0] if archs else None


def preview(items: list[str], limit: int = 6) -> str:
    """A short, deterministic list for messages: 'a, b, c and 4 more'."""
    shown = ", ".join(items[:limit])
    return shown if len(items) <= limit else f"{shown} and {len(items) - limit} more"


def capped(findings: list[Finding], limit: int = 20) -> list[Finding]:
    """The first `limit` findings, plus one that counts the rest (hostile files stay readable)."""
    if len(findings) <= limit:
        return findings
    last = findings[limit]
    rest = len(findings) - limit
    more = finding(last.code, f"... and {rest} more {last.code} finding(s) like the above",
                   path=last.path)
    return [*findings[:limit], more]
