"""The catalog report: one row per `layer-package` reference of a catalog, each with a pinned
verdict, and the catalog's own findings.

The JSON Schema in `docs/catalog-report.schema.json` is generated from these models
(`python3 scripts/generate.py catalog-report-schema`); a test fails when it drifts.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from meshcert.certify.report import OverallStatus, ToolInfo
from meshcert.core.findings import Finding

CATALOG_REPORT_KIND: Literal["meshcert-catalog-report"] = "meshcert-catalog-report"
MeshLlmVerdict = Literal["accepts", "refuses", "unknown"]
Change = Literal["new", "changed", "unchanged", "retried"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class CatalogSource(_Model):
    input: str = Field(description="The CATALOG argument as given.")
    kind: Literal["local", "hf"]
    location: str = Field(description="The checkout's directory, or the dataset repo id.")
    revision: str | None = Field(default=None, description="The dataset commit the entries "
                                 "were read at (hf:// catalogs).")
    requested_revision: str | None = None
    entry_files: int = Field(description="Entry files read (readable or not).")


class CatalogOptions(_Model):
    """The options every package was certified with (`--since` re-uses a row only when they
    are the same)."""

    runtime_abi: str | None = None
    strict: bool = False
    verify_sha256: bool = False
    min_mesh_llm: str | None = Field(default=None, description="The mesh-llm release every "
                                     "package must load on (`catalog recheck --mesh-llm`): a "
                                     "manifest needing a newer one is an error.")


class PackageFacts(_Model):
    """What the package's manifest says about itself (compared with the entry; kept so that
    `--since` can compare a re-used row with a changed entry)."""

    format: Literal["v1", "v2"] | None = None
    model_id: str | None = None
    package_id: str | None = None
    layer_count: int | None = None
    total_bytes: int | None = Field(default=None, description="Sum of the declared artifact "
                                    "sizes.")
    artifacts: int | None = Field(default=None, description="Declared artifacts.")
    source_repo: str | None = None
    source_revision: str | None = None
    source_file: str | None = Field(default=None, description="Base name of the source's "
                                    "primary file.")
    producer_abi: str | None = Field(default=None, description="native_abi_version (v2) or "
                                     "skippy_abi_version (v1).")
    mesh_llm_minimum: str | None = Field(
        default=None, description="v2: the oldest mesh-llm release that loads the manifest "
        "(0.76.0 base v2, 0.77.0 with publisher metadata, 0.78.1 with request defaults).")
    kv_cache_type: str | None = Field(default=None, description="v2: the K/V cache type a "
                                      "node applies from the package (f16, q8_0, q4_0).")
    compute_dtype: str | None = Field(default=None, description="v2: the declared "
                                      "publisher_defaults.compute_dtype.")
    request_profiles: list[str] = Field(default_factory=list, description="v2: the request "
                                        "profile names it ships (generation.request_defaults).")
    default_profile: str | None = Field(default=None, description="v2: the profile "
                                        "selection.default names.")


class Certification(_Model):
    """The package's own certification (its cert.json), in short."""

    status: OverallStatus
    error_codes: list[str] = Field(default_factory=list)
    warning_codes: list[str] = Field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    verdict: str | None = Field(default=None, description="The package's verdict sentence, "
                                "as `models certify` ends (null in reports written before "
                                "the catalog stated it).")


class CatalogPackage(_Model):
    """One `layer-package` reference and its verdict."""

    entry: str = Field(description="The entry file, entries/<owner>/<repo>.json.")
    variant: str
    index: int = Field(description="Position in the variant's packages list.")
    repo: str
    requested_revision: str | None = Field(default=None, description="The revision the entry "
                                           "records, if any.")
    revision: str | None = Field(default=None, description="The commit certified (null when "
                                 "the repo could not be resolved).")
    revision_source: Literal["entry", "resolved"] | None = Field(
        default=None, description="entry: the entry pins this commit; resolved: the entry "
        "records no commit, so the default branch's current commit was certified.")
    status: OverallStatus = Field(description="The row's verdict: the package's certification "
                                  "and the catalog findings together.")
    certification: Certification | None = Field(default=None, description="The package's "
                                                 "own verdict (null: not certified, e.g. the "
                                                 "repo could not be resolved).")
    format: Literal["v1", "v2"] | None = None
    error_codes: list[str] = Field(default_factory=list, description="Distinct error codes, "
                                   "the package's and the catalog's.")
    warning_codes: list[str] = Field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    findings: list[Finding] = Field(default_factory=list, description="Catalog-level findings "
                                    "about this reference (the package's own are in its "
                                    "cert.json).")
    mesh_llm_verdict: MeshLlmVerdict = Field(
        default="unknown", description="What mesh-llm's own certifier is expected to say: "
        "refuses when a refusal meshcert knows of applies, accepts when none does and meshcert "
        "passed, unknown otherwise.")
    mesh_llm_reasons: list[str] = Field(default_factory=list)
    cert_json: str | None = Field(default=None, description="The package's cert.json, "
                                  "relative to the --out-dir (when kept).")
    cert_html: str | None = None
    facts: PackageFacts | None = None
    attested: str | None = Field(default=None, description="With --trust: the trusted "
                                 "signer of the package's valid attestation (ed25519:<hex> or "
                                 "a CI identity).")
    attested_only: bool = Field(default=False, description="--trust-attested: accepted from "
                                "its attestation without reading any header.")
    requests: int = Field(default=0, description="Hub requests this row cost in this run "
                          "(0: re-used, or certified once for an earlier row).")
    change: Change | None = Field(default=None, description="With --since: new, changed "
                                  "(another commit), unchanged (re-used) or retried (the "
                                  "previous run was incomplete or used other options).")
    previous_revision: str | None = None


class SinceInfo(_Model):
    report: str = Field(description="The previous catalog report, as given to --since.")
    previous_catalog_revision: str | None = None
    new: int = 0
    changed: int = 0
    unchanged: int = 0
    retried: int = 0
    removed: list[str] = Field(default_factory=list, description="References the previous "
                               "report had and the catalog no longer has (entry variant "
                               "repo).")


class CatalogCounts(_Model):
    packages: int = 0
    passed: int = 0
    failed: int = 0
    incomplete: int = 0
    mesh_llm_refuses: int = 0
    unpinned: int = 0
    certified: int = Field(default=0, description="Distinct packages certified in this run.")
    requests: int = Field(default=0, description="Hub requests for the packages (the catalog's "
                          "own reads not included).")


class CatalogReport(_Model):
    schema_version: Literal[1] = 1
    kind: Literal["meshcert-catalog-report"] = CATALOG_REPORT_KIND
    status: OverallStatus
    catalog: CatalogSource
    options: CatalogOptions
    packages: list[CatalogPackage] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list, description="Entry files that could "
                                    "not be read, in whole or in part.")
    counts: CatalogCounts
    since: SinceInfo | None = None
    tool: ToolInfo
    started_at: str
    finished_at: str

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def catalog_report_schema() -> dict[str, object]:
    return CatalogReport.model_json_schema()
