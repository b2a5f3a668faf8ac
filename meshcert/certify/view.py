"""PackageView: everything the checks may look at, gathered by a PackageSource beforehand.

Checks never touch disk or network: a source (local directory, Hub) fills this in, so local
and hf:// packages run the very same checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meshcert.certify.manifest_model import (
    ArtifactEntry,
    PackageFormat,
    artifact_entries,
    package_format,
)
from meshcert.certify.scope import Selection
from meshcert.core.gguf.model import GGUFHeader

if TYPE_CHECKING:  # names of the fields' types only: a source imports what it fills in
    from meshcert.certify.build_results import ParityResult, StageBuild
    from meshcert.certify.formats.v2_carrier import TensorCatalog
    from meshcert.certify.manifest_parse import ParsedManifest
    from meshcert.certify.report import VerificationMode
    from meshcert.certify.report_ref import RefInfo
    from meshcert.certify.scope import ScopeRequest
    from meshcert.core.file_facts import FileFact
    from meshcert.core.findings import Finding
    from meshcert.core.gguf.model import HeaderProblem
    from meshcert.core.gguf.tensor_digests import FragmentDigests
    from meshcert.core.hub.provenance import SourceCheck

# publisher files (metadata/*.json, metadata/chat_template.jinja) are read whole, up to this
MAX_PUBLISHER_FILE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class SmallFile:
    """A small non-GGUF artifact the source read whole (a publisher file): its bytes, or, when
    it was larger than the cap, its size and no bytes."""

    path: str
    data: bytes | None
    size: int

    @property
    def too_large(self) -> bool:
        return self.data is None


@dataclass
class CertOptions:
    """User choices that change what the checks demand."""

    runtime_abi: str | None = None
    allow_unpinned: bool = False
    verify_sha256: bool | None = None  # None: local dirs hash everything, hf:// trusts the Hub
    stages: int | None = None
    evidence_verdicts: dict[str, str] | None = None  # policy -> verdict (from decisions.json)
    scope: ScopeRequest | None = None  # --layers A..B / --stage I/N: certify one node's slice
    min_mesh_llm: str | None = None  # --min-mesh-llm X.Y.Z: the oldest release to load on
    strict: bool = False  # --strict: any warning fails (meshcert.cli.shared_options.STRICT_HELP)
    # the load-as-node work the run was asked for (set by meshcert.certify.service from its
    # request): a check of work not asked for is reported skipped, naming its flag
    source: bool = False  # --source SOURCE.gguf
    materialize: bool = False  # --materialize
    parity: bool = False  # --parity SOURCE.gguf
    # ask the Hub whether the recorded source identity is true (meshcert.certify.provenance):
    # `models certify` and `catalog certify` do, the library does not unless told
    source_identity: bool = False
    # the verify cache holds the digests `package write` took while writing these bytes
    # (meshcert.writer.certify_step): its hits are `written` in the coverage, not `cache`
    digests_written: bool = False


@dataclass
class PackageView:
    ref: RefInfo
    display_ref: str
    local_dir: str | None
    manifest_raw: bytes | None
    parsed: ParsedManifest
    files: dict[str, FileFact] = field(default_factory=dict)  # declared safe paths
    listing: list[str] | None = None  # every file path in the package, when known
    headers: dict[str, GGUFHeader | HeaderProblem] = field(default_factory=dict)
    # v1: the SHA-256 of each fragment's metadata-role tensors (path -> digests), hashed by
    # the source while it read the headers; a fragment missing here was not hashed at all
    tensor_digests: dict[str, FragmentDigests] = field(default_factory=dict)
    readme_text: str | None = None
    readme_raw: bytes | None = None  # README.md's bytes as read (capped), to decode strictly
    verification: VerificationMode | None = None
    options: CertOptions = field(default_factory=CertOptions)
    source_findings: list[Finding] = field(default_factory=list)  # ref/hub problems
    source_incomplete: bool = False  # the source could not gather everything it should
    source_header: GGUFHeader | HeaderProblem | None = None  # --source GGUF, when given
    source_facts: dict[str, Any] = field(default_factory=dict)
    transfer: dict[str, int] = field(default_factory=dict)
    stage_builds: dict[str, StageBuild] | None = None  # --materialize: stage_id -> build
    # the recorded source identity as the Hub answered it (None: not asked, or none recorded)
    source_check: SourceCheck | None = None
    parity: ParityResult | None = None  # --parity: the split-parity run
    # time spent for a check outside it (a worker's load, the source's hashing), by check
    # name: the engine adds it to the check's duration_ms
    work_ms: dict[str, float] = field(default_factory=dict)
    _tensor_catalog: list[TensorCatalog | None] = field(default_factory=list, repr=False)  # memo
    standalone: bool = False  # `models inspect`: the headers are bare GGUF files, no package
    _selection: list[Selection] = field(default_factory=list, repr=False)  # memo
    # v2 publisher artifacts read whole by the source (path -> bytes); a path missing here was
    # not read (missing file, outside the slice, a Hub failure the source reported)
    publisher_files: dict[str, SmallFile] = field(default_factory=dict)

    @property
    def manifest(self) -> dict[str, Any] | None:
        return self.parsed.data

    @property
    def package_format(self) -> PackageFormat | None:
        return package_format(self.parsed.data)

    def artifacts(self) -> list[ArtifactEntry]:
        """Every declared artifact, through the adapter of the manifest's format."""
        fmt = self.package_format
        if fmt == "v2":
            from meshcert.certify.formats.v2_layout import v2_artifact_entries

            return v2_artifact_entries(self.parsed.data or {})
        # v1, or an unsupported version read as v1 so its files are still checked
        return artifact_entries(self.parsed.data) if self.parsed.data is not None else []

    def selection(self) -> Selection:
        """The slice this run certifies (every artifact when no scope was asked for)."""
        if not self._selection:
            self._selection.append(Selection.resolve(self.options.scope, self.manifest,
                                                     self.package_format, self.artifacts()))
        return self._selection[0]

    def selected(self, path: object) -> bool:
        """Whether the artifact at `path` is in this run's slice (sources gather only those)."""
        return self.selection().includes(path)

    def publisher_artifact_paths(self) -> list[str]:
        """v2: the paths of the artifacts publisher_metadata names (artifact_catalog order), the
        ones a source reads whole into `publisher_files`."""
        if self.package_format != "v2":
            return []
        from meshcert.certify.formats.publisher import publisher_artifact_ids

        ids = publisher_artifact_ids(self.manifest or {})
        out: list[str] = []
        for entry in self.artifacts():
            if (entry.artifact_id in ids and isinstance(entry.path, str)
                    and entry.path not in out):
                out.append(entry.path)
        return out

    def carrier_entry(self) -> ArtifactEntry | None:
        """v2: the metadata carrier's artifact entry (None for v1 or when none is declared)."""
        if self.package_format != "v2":
            return None
        return next((e for e in self.artifacts() if e.role == "shared.metadata"), None)

    def unidentified_carrier(self) -> ArtifactEntry | None:
        """v2 with no carrier named (metadata_artifact_id missing, empty or unknown): the
        artifact that is the carrier by layout (shared/metadata.gguf without a data
        section), if there is one. Its header is not bounds-checked as a plain GGUF."""
        if self.package_format != "v2" or self.carrier_entry() is not None:
            return None
        from meshcert.certify.formats.v2_carrier import carrier_by_layout

        for entry in self.artifacts():
            header = self.headers.get(entry.path) if isinstance(entry.path, str) else None
            if isinstance(header, GGUFHeader) and carrier_by_layout(entry.path, header):
                return entry
        return None

    def tensor_catalog(self) -> TensorCatalog | None:
        """v2: the tensor catalog rebuilt from the carrier's header (None when v1, or when the
        carrier's header could not be read: the structure checks report that)."""
        if self._tensor_catalog:
            return self._tensor_catalog[0]
        from meshcert.certify.formats.v2_carrier import rebuild_catalog
        from meshcert.certify.formats.v2_layout import payload_entries

        carrier = self.carrier_entry()
        header = self.headers.get(carrier.path) if carrier is not None else None
        tensor_catalog = (rebuild_catalog(header, payload_entries(self.artifacts()))
                   if isinstance(header, GGUFHeader) else None)
        self._tensor_catalog.append(tensor_catalog)
        return tensor_catalog
