"""The planned package as data: each artifact's tensors, metadata entries and exact size.

`Artifact.header_pieces()` are the bytes [0, data_offset) of the file (preamble, metadata
entries, tensor infos, padding); the data section follows, each tensor at its placement's
offset. Planning (meshcert.writer.plan) and the carrier (meshcert.writer.carrier) build these;
the writer (meshcert.writer.stream) writes them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from meshcert.certify.formats.v2_carrier import SPLIT_KEYS
from meshcert.core.gguf import wire
from meshcert.writer.publisher import PublisherInput
from meshcert.writer.source import ProjectorFile, SourceModel, SourceTensor

Format = Literal["v2", "v1"]
ALIGNMENT_KEY = "general.alignment"
CARRIER_ID, CARRIER_PATH = "metadata", "shared/metadata.gguf"


@dataclass(frozen=True)
class Placement:
    """One tensor stored in one artifact."""

    source: SourceTensor
    offset: int  # relative to the artifact's data section

    @property
    def name(self) -> str:
        return self.source.name

    @property
    def n_bytes(self) -> int:
        return self.source.n_bytes

    def info_bytes(self) -> bytes:
        info = self.source.info
        return wire.tensor_info(info.name, info.shape, info.ggml_type, self.offset)


@dataclass
class Artifact:
    artifact_id: str
    path: str
    role: str  # shared.metadata | shared.embeddings | shared.output | shared.common | layer |
    # projector | publisher
    layer_index: int | None
    placements: list[Placement]
    kv_pieces: list[bytes]  # raw metadata entries, in order (shared with other artifacts)
    alignment: int
    trailing_padding: bool = True
    projector: ProjectorFile | None = None  # a verbatim copy of this file
    publisher: PublisherInput | None = None  # a verbatim copy of these bytes (metadata/*)
    # the v2 carrier: tensor infos given as bytes (the whole model's directory), no data
    directory: list[bytes] | None = None
    data_offset: int = 0
    size: int = 0

    def __post_init__(self) -> None:
        if self.projector is not None:
            self.data_offset = self.size = self.projector.size
            return
        if self.publisher is not None:
            self.data_offset = self.size = self.publisher.size
            return
        header = wire.PREAMBLE_BYTES + sum(map(len, self.kv_pieces)) + sum(
            map(len, self._infos()))
        self.data_offset = wire.align(header, self.alignment)
        end = max((p.offset + p.n_bytes for p in self.placements), default=0)
        self.size = self.data_offset + (wire.align(end, self.alignment)
                                        if self.trailing_padding else end)

    def _infos(self) -> list[bytes]:
        if self.directory is not None:
            return self.directory
        return [p.info_bytes() for p in self.placements]

    @property
    def verbatim(self) -> bool:
        """A file copied byte for byte (a projector, a publisher file), not a GGUF written
        from tensors."""
        return self.projector is not None or self.publisher is not None

    @property
    def tensor_bytes(self) -> int:
        return sum(p.n_bytes for p in self.placements)

    def header_pieces(self) -> list[bytes]:
        """The bytes [0, data_offset): preamble, metadata entries, tensor infos, padding."""
        infos = self._infos()
        used = wire.PREAMBLE_BYTES + sum(map(len, self.kv_pieces)) + sum(map(len, infos))
        return [wire.preamble(len(infos), len(self.kv_pieces)), *self.kv_pieces,
                *infos, bytes(self.data_offset - used)]


@dataclass
class PackagePlan:
    format: Format
    source: SourceModel
    artifacts: list[Artifact]  # in manifest order; for v2 the carrier is planned separately
    layer_count: int
    mtp_layers: list[int]
    carrier: Artifact | None = None  # v2 only (its size is exact: see meshcert.writer.carrier)
    sidecar_names: dict[str, str] = field(default_factory=dict)  # v2 projector id -> name
    # v2: publisher_metadata[] entries, publisher_defaults (None: absent) and the
    # --generation-defaults object (None: none given)
    publisher_entries: list[dict[str, str]] = field(default_factory=list)
    publisher_defaults: dict[str, dict[str, str]] | None = None
    request_defaults: dict[str, Any] | None = None

    @property
    def payload(self) -> list[Artifact]:
        """v2: the artifacts the carrier's tensor_part indexes, sorted by id."""
        return sorted((a for a in self.artifacts if a.role not in ("shared.metadata",
                                                                   "projector", "publisher")),
                      key=lambda a: a.artifact_id)

    def all_artifacts(self) -> list[Artifact]:
        """Every file, in manifest order (the v2 carrier first)."""
        return ([self.carrier] if self.carrier is not None else []) + self.artifacts

    @property
    def total_bytes(self) -> int:
        return sum(a.size for a in self.all_artifacts())


def base_entries(source: SourceModel, *, drop_alignment: bool) -> list[bytes]:
    skip = set(SPLIT_KEYS) | ({ALIGNMENT_KEY} if drop_alignment else set())
    return [raw for key, raw in source.kv_entries()
            if key not in skip and not key.startswith("skippy.")]


def alignment_entry(source: SourceModel) -> bytes:
    return wire.kv(ALIGNMENT_KEY, wire.UINT32, source.alignment)
