"""What a publish is asked to do and what it reports back: plain data, shared by the publish
service, the streaming publisher, the attestation commit and the CLI."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from meshcert.core.usage import only_with
from meshcert.publish.plan import DEFAULT_MAX_BYTES_PER_COMMIT, DEFAULT_MAX_FILES_PER_COMMIT

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport

# the certified report -> the .intoto.jsonl bytes to commit, or why none can be made
SignPublished = Callable[["CertReport"], "bytes | str"]
PublishStatus = Literal["published", "failed", "refused", "incomplete"]
Progress = Callable[[str], None]


@dataclass(frozen=True)
class PublishRequest:
    package_dir: str
    target: str  # ns/repo
    private: bool = False
    branch: str | None = None  # default: main
    create_pr: bool = False
    experimental: bool = False
    catalog: str | None = None  # ns/catalog (a dataset repo)
    commit_message: str | None = None
    max_files_per_commit: int = DEFAULT_MAX_FILES_PER_COMMIT
    max_bytes_per_commit: int = DEFAULT_MAX_BYTES_PER_COMMIT
    verify_cache: str | None = None  # the certification's digest cache, reused
    token: str | None = None  # None: huggingface_hub's own (HF_TOKEN, then the stored login)
    # --attest-key: signs the published commit's passed certification
    # (meshcert/publish/attestation.py)
    sign: SignPublished | None = None


@dataclass(frozen=True)
class PublishWhileWriting:
    """`package write --publish NS/REPO`: where and how the package is published as it is
    written (`target` None: not published; then none of the other options applies)."""

    target: str | None
    delete_after_upload: bool = False
    private: bool = False
    catalog: str | None = None  # ns/catalog, as PublishRequest.catalog
    experimental: bool = False
    attest_key: str | None = None  # the signing key file (read by the CLI)

    def check(self) -> None:
        """Without a target, each other option given is a usage error (OptionError)."""
        if self.target is None:
            only_with({"--delete-after-upload": self.delete_after_upload,
                       "--private": self.private, "--catalog": self.catalog is not None,
                       "--experimental": self.experimental,
                       "--attest-key": self.attest_key is not None}, "--publish")


@dataclass(frozen=True)
class CatalogOutcome:
    repo: str
    path: str
    commit: str
    pull_request_url: str | None  # set when the entry was proposed as a pull request
    reason: str


@dataclass
class PublishResult:
    status: PublishStatus
    message: str
    target: str
    commit: str | None = None  # the published commit (the manifest's)
    commits: list[str] = field(default_factory=list)  # commits this run made, in order
    uploaded: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # already on the target, same sha256
    pull_request_url: str | None = None  # --create-pr
    local_report: CertReport | None = None
    remote_report: CertReport | None = None
    catalog: CatalogOutcome | None = None
    attestation_commit: str | None = None  # --attest-key: the commit adding the attestation
    attestation_note: str | None = None  # why no attestation was made, when none was

    @property
    def pinned(self) -> str | None:
        """The one commit of this publication: the one holding the attestation when one was
        committed (its artifacts are the certified commit's), else the certified commit. It
        is the ref printed, the catalog's pin, and where `attest verify` finds the attestation."""
        return self.attestation_commit or self.commit

    @property
    def certified_ref(self) -> str | None:
        """The commit the published certification ran on (the attestation's resourceUri)."""
        return f"hf://{self.target}@{self.commit}" if self.commit else None

    @property
    def ref(self) -> str | None:
        return f"hf://{self.target}@{self.pinned}" if self.pinned else None

    @property
    def serve_command(self) -> str | None:
        return f"mesh-llm serve --model {self.ref} --split" if self.ref else None
