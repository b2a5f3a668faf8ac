"""What `--source SRC.gguf` gathered (data only): filled by meshcert.certify.sources.source_gguf,
read by checks/source_parity.py. Stored on the view as ``view.source_facts[SOURCE_FACTS_KEY]``."""

from __future__ import annotations

from dataclasses import dataclass, field

from meshcert.certify.view import PackageView
from meshcert.core.gguf.model import GGUFHeader, HeaderProblem

SOURCE_FACTS_KEY = "source_gguf"


@dataclass(frozen=True)
class SourceShard:
    """One file of the source model (the only one, or one of a -0000i-of-0000N split set)."""

    path: str
    header: GGUFHeader | HeaderProblem
    size: int | None = None
    sha256: str | None = None  # of the whole file, lower-case hex
    error: str | None = None  # why the file could not be read or hashed


@dataclass(frozen=True)
class SourceTensor:
    name: str
    shard: int  # index into SourceFacts.shards
    ggml_type: int
    shape: tuple[int, ...]
    n_bytes: int
    digest: str | None  # of its data bytes (SourceFacts.tensor_digest); None when they lie
    # outside the file


@dataclass
class SourceFacts:
    given_path: str
    shards: list[SourceShard] = field(default_factory=list)
    tensors: dict[str, SourceTensor] = field(default_factory=dict)
    # (package artifact path, tensor name) -> digest of the tensor's bytes in the package
    package_tensor_digest: dict[tuple[str, str], str | None] = field(default_factory=dict)
    # the algorithm of every tensor digest on both sides: `--source` hashes both with SHA-256;
    # the writer (meshcert.writer.facts) takes xxh3-128 as the bytes stream (stream.py says why)
    tensor_digest: str = "sha256"
    package_data_hashed: bool = False  # False when the package files are not on local disk
    error: str | None = None  # the source could not be used at all (missing, missing shards)
    problems: list[str] = field(default_factory=list)  # partial failures (a file unreadable)


def source_facts(view: PackageView) -> SourceFacts | None:
    facts = view.source_facts.get(SOURCE_FACTS_KEY)
    return facts if isinstance(facts, SourceFacts) else None
