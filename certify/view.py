"""PackageView: everything the checks may look at, gathered by a PackageSource beforehand.

Checks never touch disk or network: a source (local directory, Hub) fills this in, so local
and hf:// packages run the very same checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from certify.findings import Finding
from certify.gguf.model import GGUFHeader, HeaderError
from certify.manifest_model import ArtifactEntry, artifact_entries
from certify.manifest_parse import ParsedManifest
from certify.report import RefInfo, VerificationMode

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


@dataclass
class CertOptions:
    """User choices that change what the checks demand."""

    runtime_abi: str | None = None
    allow_unpinned: bool = False
    verify_sha256: bool | None = None  # None: local dirs hash everything, hf:// trusts the Hub
    stages: int | None = None
    evidence_verdicts: dict[str, str] | None = None  # policy -> verdict (from decisions.json)


@dataclass
class PackageView:
    ref: RefInfo
    display_ref: str
    local_dir: str | None
    manifest_raw: bytes | None
    parsed: ParsedManifest
    files: dict[str, FileFact] = field(default_factory=dict)  # declared safe paths
    listing: list[str] | None = None  # every file path in the package, when known
    headers: dict[str, GGUFHeader | HeaderError] = field(default_factory=dict)
    readme_text: str | None = None
    verification: VerificationMode | None = None
    options: CertOptions = field(default_factory=CertOptions)
    source_findings: list[Finding] = field(default_factory=list)  # ref/hub problems
    source_incomplete: bool = False  # the source could not gather everything it should
    source_header: GGUFHeader | HeaderError | None = None  # --source GGUF, when given
    source_facts: dict[str, Any] = field(default_factory=dict)
    transfer: dict[str, int] = field(default_factory=dict)
    standalone: bool = False  # `models inspect`: the headers are bare GGUF files, no package

    @property
    def manifest(self) -> dict[str, Any] | None:
        return self.parsed.data

    def artifacts(self) -> list[ArtifactEntry]:
        return artifact_entries(self.parsed.data) if self.parsed.data is not None else []
