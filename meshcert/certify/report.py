"""cert.json: the certification report models (a superset of mesh-llm's report).

The JSON Schema in `docs/cert.schema.json` is generated from these models
(`python3 scripts/generate.py cert-schema`); a test fails when it drifts.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from meshcert.certify.report_ref import RefInfo
from meshcert.core.findings import Finding

GateStatus = Literal["passed", "failed", "incomplete", "not_required"]
OverallStatus = Literal["passed", "failed", "incomplete"]
CheckStatus = Literal["passed", "failed", "warning", "error", "skipped"]
VerificationMode = Literal["local-sha256", "hub-attested", "sha256-streamed", "size-only"]

SCHEMA_VERSION: Literal[1] = 1
# the `check` named by the findings a trust policy (--trust) adds to a certification
ATTESTATION_POLICY = "attestation_policy"
# how a skipped check's details begin (meshcert.certify.checks.asked_for / applicable)
NOT_ASKED_FOR = "not asked for"
NOT_APPLICABLE = "not applicable"
# a check the run did not explicitly ask for whose tool is missing (llama_cpp_gguf without
# llama-cpp-python) is skipped with "not available: <why>"; a tool the user explicitly asked
# for (--materialize, --parity) that is missing makes the report incomplete instead
NOT_AVAILABLE = "not available"
# the measurements of the v1_chat_completions gate naming the model asked for and the model
# that answered (meshcert.certify.runtime.gates; meshcert.certify.coverage reads them)
REQUESTED_MODEL = "requested_model"
SERVED_MODEL = "served_model"
DigestCoverageMode = Literal["hashed", "cache", "written", "sizes_only", "hub_attested", "none"]
ToolCoverage = Literal["ran", "not_available", "not_asked"]


class _Model(BaseModel):
    # Built at import, not deferred (pydantic's defer_build would save ~10 ms of start-up): a
    # deferred model is built by whichever thread uses it first, pydantic has not always
    # guarded that build against a second thread (pydantic/pydantic#13419), and a catalog
    # certifies packages on several threads at once.
    model_config = ConfigDict(extra="forbid")


class Gate(_Model):
    name: str
    status: GateStatus
    details: str | None = None


class RuntimeGate(Gate):
    """A runtime gate with its measurements (all optional: a gate that never got an answer
    has none)."""

    severity: Literal["required", "warning"] = "required"
    http_status: int | None = None
    latency_ms: float | None = None
    ttft_ms: float | None = None
    completion_tokens: int | None = None
    tokens_per_s: float | None = None
    measurements: dict[str, float | int | str | None] = Field(default_factory=dict)


class StagePart(_Model):
    role: str
    path: str
    artifact_bytes: int | None = None
    layer_index: int | None = None


class MaterializedStage(_Model):
    stage_id: str
    layer_start: int
    layer_end: int
    include_embeddings: bool
    include_output: bool
    selected_part_count: int
    verified_artifacts: int
    cached_artifacts: int
    materialized_path: str | None
    materialized_bytes: int
    parts: list[StagePart] = Field(default_factory=list)


class CheckRun(_Model):
    name: str
    status: CheckStatus = Field(description="passed, failed (error findings), warning "
                                "(warning findings only), error (it crashed or could not "
                                "decide), skipped (it did no work: `details` says why); "
                                "skipped counts neither as passed nor as failed.")
    findings: int = Field(description="Number of findings this check produced.")
    duration_ms: float = Field(description="Its time, including the work done for it "
                               "before it ran (reading --source, --materialize, --parity, "
                               "llama.cpp's parser, the template audit).")
    codes: list[str] = Field(default_factory=list, description="Distinct codes it produced.")
    details: str | None = Field(default=None, description="skipped: 'not asked for: runs "
                                "with <flag>' or 'not applicable: <why>'; error: the crash.")


class SourceModel(_Model):
    """The model the package was split from, as its manifest records it (`source_model`)."""

    repo: str | None = Field(default=None, description="source_model.repo (the Hub repo).")
    revision: str | None = Field(default=None, description="source_model.revision.")
    file: str | None = Field(default=None, description="The source GGUF's file name: "
                             "primary_file, else the base name of files[0].path or path.")
    identity: Literal["verified", "mismatch", "unverified"] | None = Field(
        default=None, description="What the Hub said of the recorded source identity: "
        "verified (repo@revision holds the file with the recorded SHA-256), mismatch, or "
        "unverified (claimed, not verified: no check was possible); null when not checked "
        "(the library default) or nothing is recorded.")
    identity_detail: str | None = Field(
        default=None, description="What differs (mismatch), why no check was possible "
        "(unverified), or the commit checked (verified).")


class ToolInfo(_Model):
    name: str = "meshcert"
    version: str
    mesh_llm_version: str | None = Field(
        default=None, description="The mesh-llm release whose package rules this meshcert "
        "implements (null in reports written before meshcert stated it).")


class TransferStats(_Model):
    requests: int = 0
    bytes_transferred: int = 0
    header_bytes: int = 0


class CertScope(_Model):
    """The slice a run certified (`--layers A..B` / `--stage I/N`): artifact checks ran on
    exactly these artifacts; the manifest-wide checks ran as always."""

    layer_start: int
    layer_end: int = Field(description="Exclusive, like mesh-llm's stage ranges.")
    stage: str | None = Field(default=None, description="I/N when given as --stage.")
    artifacts: list[str] = Field(default_factory=list, description="Artifact paths verified.")
    hashed_artifacts: list[str] | None = Field(
        default=None, description="--hash-once: the artifacts of `artifacts` whose digest this "
        "slice answers for (its share of the N-stage plan: each artifact is hashed by exactly "
        "one slice; the others check its size and header). Absent: all of `artifacts`.")


class SliceCoverage(_Model):
    """One slice of a merged report: which report, what it covered, how it ended."""

    report: str = Field(description="The slice report's file, as given to `report merge`.")
    status: OverallStatus
    layer_start: int
    layer_end: int
    stage: str | None = None
    artifacts: int = Field(description="Number of artifacts this slice verified.")


class MergeInfo(_Model):
    """`meshcert report merge`: the slices and what none of them verified."""

    slices: list[SliceCoverage]
    verified_artifacts: int
    declared_artifacts: int
    unverified_layers: list[int] = Field(default_factory=list)
    unverified_artifacts: list[str] = Field(default_factory=list)


class HfJob(_Model):
    """One Hugging Face job a certification ran (`--hf-job`): which slice, how it ended."""

    slice: str = Field(description="The slice it certified, as I/N.")
    job_id: str
    flavor: str
    stage: str = Field(description="The job's final stage: COMPLETED, ERROR, CANCELED, ...")
    message: str | None = None
    report: bool = Field(description="Whether its slice report came back through its logs.")


class RequestProfile(_Model):
    """One profile of generation.request_defaults, as a node would apply it."""

    name: str
    selection: list[str] = Field(
        default_factory=list, description="The selection roles naming it: default, "
        "reasoning_enabled, reasoning_disabled.")
    fields: dict[str, Any] = Field(
        default_factory=dict, description="Its set fields as declared (long strings and lists "
        "shortened for the report), provenance included.")


class NodeDefaults(_Model):
    """What a mesh-llm node applies from the package (mesh-llm-0.79.md §2.3 'Runtime use'):
    an explicit user K/V type wins, then the package's kv_cache_dtype, then its compute_dtype;
    only q8_0/q4_0 change the live cache, everything else runs F16/F16."""

    kv_cache_type: str = Field(description="The K and V cache type a node applies when its "
                               "user gives none: f16, q8_0 or q4_0.")
    kv_cache_from: Literal["kv_cache_dtype", "compute_dtype", "runtime_default"] = Field(
        description="Which package declaration decided it (runtime_default: none did).")
    declared_kv_cache_dtype: str | None = None
    declared_compute_dtype: str | None = None
    request_profiles: list[RequestProfile] = Field(default_factory=list)


class MeshLlmSupport(_Model):
    """Which mesh-llm releases can load the package (§4) and serve it split (§3.4)."""

    minimum_version: str | None = Field(
        default=None, description="The oldest mesh-llm release that accepts the manifest "
        "(null for v1 or an unreadable manifest).")
    minimum_reasons: list[str] = Field(
        default_factory=list, description="Each manifest feature and the release it needs, "
        "e.g. 'publisher_metadata >= 0.77.0'.")
    required_by_option: str | None = Field(
        default=None, description="--min-mesh-llm: the oldest release the package must load "
        "on.")
    architecture: str | None = None
    split_certified: bool | None = Field(
        default=None, description="Whether the architecture is on the split-serving roster "
        "meshcert ships (null when the architecture is unknown).")
    roster_recipe: dict[str, str] = Field(
        default_factory=dict, description="The native recipe of the roster used (the values "
        "known; a value meshcert has not read is left out).")
    roster_recipe_used: str | None = Field(
        default=None, description="Which roster recipe was used: the mesh-llm commit of its "
        "split-certified.json, its skippy ABI and llama.cpp pin (the newest meshcert knows). "
        "Being on the roster is not the same as the recipe equalling a runtime's.")
    roster_retrieved: str | None = None
    roster_partial: bool = False


class AttestationSummary(_Model):
    """The signed attestation made of this report (`--attest-key`; docs/attestation.md)."""

    signer: str = Field(description="ed25519:<64 hex> key id, or a CI identity.")
    result: Literal["PASSED", "FAILED"]
    subjects: int = Field(description="Subjects signed: the manifest and every artifact.")
    file: str | None = Field(default=None, description="The .intoto.jsonl file written.")


class DigestCoverage(_Model):
    """How the digests of the artifacts this run checked were verified."""

    mode: DigestCoverageMode = Field(description="hashed: every artifact checked was hashed "
                                     "in this run; cache: some digests came from a "
                                     "--verify-cache entry (not re-hashed); written: some "
                                     "digests were taken by `package write` while it wrote "
                                     "the bytes (not re-read from disk); sizes_only: some "
                                     "artifacts were checked by size only "
                                     "(--no-verify-sha256, or --hash-once's other shares); "
                                     "hub_attested: some digests are the Hub's LFS SHA-256 at "
                                     "the resolved commit; none: no artifact was read.")
    artifacts: int = Field(description="Artifacts present that this run checked.")
    hashed: int = Field(description="Of them, hashed in this run.")
    cached: int = Field(description="Of them, digests taken from the verify cache.")
    written: int = Field(default=0, description="Of them, digests `package write` took while "
                         "writing the bytes, not re-read from disk (its own certification).")
    hub_attested: int = Field(description="Of them, digests the Hub attested (LFS).")
    sizes_only: int = Field(description="Of them, checked by size and header only.")


class ScopeCoverage(_Model):
    """What part of the package this run covered."""

    kind: Literal["package", "slice", "file"] = Field(description="package: every declared "
                                                      "artifact; slice: --layers/--stage; "
                                                      "file: `models inspect` of one GGUF.")
    layer_start: int | None = Field(default=None, description="slice: first layer.")
    layer_end: int | None = Field(default=None, description="slice: exclusive end.")
    artifacts_checked: int = Field(description="Declared artifacts this run checked.")
    artifacts_total: int = Field(description="Artifacts the manifest declares.")


class RuntimeCoverage(_Model):
    """Whether runtime gates ran, and which model answered them."""

    status: Literal["ran", "not_asked"]
    requested_model: str | None = Field(default=None, description="The model id asked for "
                                        "(--served-model, else MODEL as given).")
    served_model: str | None = Field(default=None, description="The model id the endpoint "
                                     "said answered (the completion's `model`, else "
                                     "/v1/models); null when none answered.")


class Coverage(_Model):
    """What this run verified (docs/certify.md, 'What a passed verdict means')."""

    digests: DigestCoverage
    scope: ScopeCoverage
    runtime: RuntimeCoverage
    parity: ToolCoverage = Field(description="--parity: ran, not_available (asked, tool "
                                 "missing: the report is incomplete) or not_asked.")
    llama_cpp: ToolCoverage = Field(description="llama.cpp's GGUF parser on every fragment: "
                                    "ran, not_available (llama-cpp-python missing, or a "
                                    "remote package) or not_asked (nothing to parse).")


class CertReport(_Model):
    schema_version: Literal[1] = SCHEMA_VERSION
    status: OverallStatus
    input: str
    resolved_package_ref: str | None = None
    local_package_dir: str | None = None
    model_id: str | None = None
    manifest_sha256: str | None = None
    source_model_path: str | None = Field(
        default=None, description="As mesh-llm fills it: v1 the manifest's source_model.path, "
        "v2 the package's carrier (not the source: see source_model).")
    source_model_sha256: str | None = None
    source_model_bytes: int | None = None
    layer_count: int | None = None
    package_gate: Gate
    materialized_stages: list[MaterializedStage] = Field(default_factory=list)
    runtime_gates: list[RuntimeGate] = Field(default_factory=list)
    # meshcert additions
    findings: list[Finding] = Field(default_factory=list)
    checks: list[CheckRun] = Field(default_factory=list)
    ref: RefInfo | None = None
    tool: ToolInfo
    started_at: str
    finished_at: str
    verification: VerificationMode | None = None
    cache_hits: int = Field(
        default=0, description="How many of `digests` came from the --verify-cache (an entry "
        "this user's meshcert wrote and MAC'd for the same file, package and stat) instead of "
        "being hashed in this run: digests_from_cache is cache_hits of len(digests). A report "
        "with cache hits is never signed.")
    stage_plan: list[MaterializedStage] = Field(
        default_factory=list, description="The package tool's N-stage plan (--stages N)."
    )
    transfer: TransferStats | None = None
    runtime_abi: str | None = None
    package_format: Literal["v1", "v2"] | None = Field(
        default=None, description="The manifest's format (schema_version 1 or 2); null when "
        "the manifest could not be read or has an unsupported schema_version.")
    package_id: str | None = Field(
        default=None, description="v2 only: the package_id the manifest declares (checked "
        "against the recomputed canonical id).")

    scope: CertScope | None = Field(
        default=None, description="Set when only a slice was certified (--layers/--stage).")
    declared_artifacts: list[str] = Field(
        default_factory=list, description="Every artifact path the manifest declares (what "
        "the slices of a `report merge` must cover together).")
    digests: dict[str, str] = Field(
        default_factory=dict, description="Every SHA-256 this run computed: path -> hex.")
    hub_digests: dict[str, str] = Field(
        default_factory=dict, description="The Hub's LFS SHA-256 at the resolved commit of each "
        "artifact this run did not hash itself (hf:// with Hub-attested hashes): path -> hex.")
    git_blobs: dict[str, str] = Field(
        default_factory=dict, description="git's blob id (SHA-1 of `blob <length>\\0` + the "
        "bytes) of each artifact read whole whose bytes hash to its verified digest (v2 "
        "publisher files): path -> hex. An attestation's subject carries it as in-toto's "
        "`gitBlob` digest, so a plain-git file on the Hub is matched from the listing without "
        "downloading it.")
    merge: MergeInfo | None = Field(
        default=None, description="Set on a report merged from slices (`report merge`).")
    hf_jobs: list[HfJob] = Field(
        default_factory=list, description="`--hf-job`: the jobs that certified the slices.")
    attestation: AttestationSummary | None = Field(
        default=None, description="Set when the report was signed (`--attest-key`).")
    node_defaults: NodeDefaults | None = Field(
        default=None, description="v2: the KV-cache type and request profiles a mesh-llm node "
        "applies from the package.")
    source_model: SourceModel | None = Field(
        default=None, description="The real source model the manifest records (repo, "
        "revision, file); null when the manifest names none.")
    mesh_llm: MeshLlmSupport | None = Field(
        default=None, description="v2: the oldest mesh-llm release that loads the package and "
        "whether its architecture may be served split.")
    coverage: Coverage | None = Field(
        default=None, description="What this run verified: digests, scope, runtime, parity, "
        "llama.cpp (null in reports written before meshcert stated it).")

    def to_json(self) -> str:
        """Pretty JSON plus a newline, as mesh-llm writes cert.json."""
        return self.model_dump_json(indent=2) + "\n"


def combine_statuses(statuses: list[str]) -> OverallStatus:
    """mesh-llm's rule: any failed -> failed; else any incomplete -> incomplete; else passed
    (`not_required` counts as a pass)."""
    if "failed" in statuses:
        return "failed"
    if "incomplete" in statuses:
        return "incomplete"
    return "passed"


def cert_json_schema() -> dict[str, object]:
    return CertReport.model_json_schema()
