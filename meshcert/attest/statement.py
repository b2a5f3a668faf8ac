"""The in-toto Statement v1 with a SLSA Verification Summary v1 predicate, made from a
certification report, and read back (pure: no I/O).

Subjects are the digests certification verified (`digests`: hashed here; `hub_digests`: the
Hub's LFS SHA-256 at the resolved commit), never the manifest's own claims, and never a digest
read from a `--verify-cache` (a report with `cache_hits` is not signed). A file certification
read whole (a v2 publisher file, kept as plain git on the Hub) also carries its git blob id as
in-toto's `gitBlob` digest, which the Hub lists for plain-git files: a verifier matches it from
the listing instead of downloading the file.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from meshcert.core.errors import MeshcertError
from meshcert.core.version import MESH_LLM_VERSION

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport

STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
VSA_PREDICATE = "https://slsa.dev/verification_summary/v1"
REPORT_EXTENSION = "urn:meshcert:attestation:report"
POLICY_URI = "urn:meshcert:policy:package-only:v1"
MANIFEST_NAME = "model-package.json"
PACKAGE_LEVEL = "MESHCERT_PACKAGE_CERTIFIED_V1"
SOURCE_LEVEL = "MESHCERT_SOURCE_VERIFIED_V1"
PARITY_LEVEL = "MESHCERT_PARITY_V1"
# The mesh-llm release whose package rules meshcert's checks apply (one constant, in the core)
MESH_LLM_RULES = MESH_LLM_VERSION


class StatementError(MeshcertError, ValueError):
    """A payload that is not a Statement v1 with the VSA predicate (message says why)."""


@dataclass(frozen=True)
class Subject:
    name: str
    sha256: str
    annotations: tuple[tuple[str, object], ...] = ()
    git_blob: str | None = None  # in-toto's gitBlob digest: git's blob SHA-1 of the bytes

    def to_json(self) -> dict[str, Any]:
        digest = {"sha256": self.sha256} | ({"gitBlob": self.git_blob} if self.git_blob else {})
        out: dict[str, Any] = {"name": self.name, "digest": digest}
        if self.annotations:
            out["annotations"] = dict(self.annotations)
        return out


@dataclass(frozen=True)
class VerdictOptions:
    """The options that change a verdict (hashed into the predicate's policy digest)."""

    strict: bool = False
    source: bool = False
    parity: bool = False
    materialize: bool = False


@dataclass(frozen=True)
class Statement:
    """What a consumer needs of a parsed statement."""

    subjects: dict[str, str]  # name -> sha256
    result: str
    resource_uri: str | None
    verifier_id: str | None
    time_verified: str | None
    report: dict[str, Any]  # the urn:meshcert:attestation:report extension
    raw: dict[str, Any]
    git_blobs: dict[str, str] = field(default_factory=dict)  # name -> gitBlob, when given


def unattestable_reason(report: CertReport) -> str | None:
    """Why no attestation can be made for this report (None: it can be signed)."""
    if report.status == "incomplete":
        return "the certification is incomplete"
    if report.scope is not None:
        return "it certified a slice (--layers/--stage), not the whole package"
    if report.merge is not None and (report.merge.unverified_artifacts
                                     or report.merge.unverified_layers):
        return "the merged slices do not cover every layer and artifact"
    if report.manifest_sha256 is None:
        return "the manifest was not read"
    if report.verification == "size-only":
        return "artifact digests were not verified (--no-verify-sha256)"
    if report.cache_hits:
        return (f"{report.cache_hits} of {len(report.digests)} artifact digest(s) came from the "
                "--verify-cache, not hashed in this run: certify again without it (a signed "
                "certification hashes every artifact itself)")
    unverified = [p for p in report.declared_artifacts if _verified_digest(report, p) is None]
    if unverified:
        shown = ", ".join(unverified[:3]) + (" ..." if len(unverified) > 3 else "")
        return f"{len(unverified)} artifact digest(s) were not verified: {shown}"
    return None


def _verified_digest(report: CertReport, path: str) -> str | None:
    return report.digests.get(path) or report.hub_digests.get(path)


def subjects_of(report: CertReport) -> list[Subject]:
    """The manifest and every declared artifact, each with the digest certification verified."""
    manifest_notes: list[tuple[str, object]] = []
    if report.package_id is not None:
        manifest_notes.append(("package_id", report.package_id))
    if report.package_format is not None:
        manifest_notes.append(("package_format", report.package_format))
    subjects = [Subject(MANIFEST_NAME, report.manifest_sha256 or "", tuple(manifest_notes))]
    for path in report.declared_artifacts:
        digest = _verified_digest(report, path)
        if digest is not None:
            subjects.append(Subject(path, digest, git_blob=report.git_blobs.get(path)))
    return subjects


def canonical_json(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
                      ).encode("utf-8")


def policy_digest(report: CertReport, options: VerdictOptions) -> str:
    chosen = {"checks": sorted({c.name for c in report.checks}), "strict": options.strict,
              "runtime_abi": report.runtime_abi, "source": options.source,
              "parity": options.parity, "materialize": options.materialize}
    return hashlib.sha256(canonical_json(chosen)).hexdigest()


def resource_uri(report: CertReport) -> str:
    ref = report.ref
    if ref is not None and ref.kind == "hf" and ref.repo and ref.resolved_commit:
        return f"hf://{ref.repo}@{ref.resolved_commit}"
    return report.input


def build_statement(report: CertReport, *, report_sha256: str, verifier_id: str,
                    options: VerdictOptions | None = None) -> dict[str, Any]:
    """The statement for a passed or failed report (see `unattestable_reason` first)."""
    options = options or VerdictOptions()
    passed = report.status == "passed"
    levels = [PACKAGE_LEVEL] if passed else ["FAILED"]
    if passed and options.source:
        levels.append(SOURCE_LEVEL)
    if passed and options.parity:
        levels.append(PARITY_LEVEL)
    version: dict[str, str] = {"meshcert": report.tool.version, "mesh-llm-rules": MESH_LLM_RULES}
    llama = next((g.measurements.get("llama_cpp_build") for g in report.runtime_gates
                  if g.name == "split_parity"), None)
    if isinstance(llama, str):
        version["llama.cpp"] = llama
    errors = sorted({f.code for f in report.findings if f.severity == "error"})
    warnings = sorted({f.code for f in report.findings if f.severity == "warning"})
    return {
        "_type": STATEMENT_TYPE,
        "subject": [s.to_json() for s in subjects_of(report)],
        "predicateType": VSA_PREDICATE,
        "predicate": {
            "verifier": {"id": verifier_id, "version": version},
            "timeVerified": report.finished_at,
            "resourceUri": resource_uri(report),
            "policy": {"uri": POLICY_URI,
                       "digest": {"sha256": policy_digest(report, options)}},
            "verificationResult": "PASSED" if passed else "FAILED",
            "verifiedLevels": levels,
            REPORT_EXTENSION: {"report_sha256": report_sha256, "status": report.status,
                               "errors": errors, "warnings": warnings,
                               "package_id": report.package_id},
        },
    }


def parse_statement(payload: bytes) -> Statement:
    """A Statement v1 with the VSA predicate, or StatementError saying what is wrong."""
    try:
        data = json.loads(payload.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise StatementError("the payload is not UTF-8 JSON") from None
    if not isinstance(data, dict) or data.get("_type") != STATEMENT_TYPE:
        raise StatementError(f"the payload's $._type is not {STATEMENT_TYPE}")
    if data.get("predicateType") != VSA_PREDICATE:
        raise StatementError(f"$.predicateType is not {VSA_PREDICATE}")
    predicate = data.get("predicate")
    if not isinstance(predicate, dict):
        raise StatementError("$.predicate is not an object")
    raw_subjects = data.get("subject")
    if not isinstance(raw_subjects, list):
        raise StatementError("$.subject is not a list")
    subjects: dict[str, str] = {}
    git_blobs: dict[str, str] = {}
    for i, item in enumerate(raw_subjects):
        name = item.get("name") if isinstance(item, dict) else None
        digest = item.get("digest") if isinstance(item, dict) else None
        sha = digest.get("sha256") if isinstance(digest, dict) else None
        if not isinstance(name, str) or not isinstance(sha, str):
            raise StatementError(f"$.subject[{i}] has no name and digest.sha256")
        subjects[name] = sha.lower()
        blob = digest.get("gitBlob") if isinstance(digest, dict) else None
        if isinstance(blob, str):
            git_blobs[name] = blob.lower()
    result = predicate.get("verificationResult")
    if not isinstance(result, str):
        raise StatementError("$.predicate.verificationResult is missing")
    verifier = predicate.get("verifier")
    verifier_id = verifier.get("id") if isinstance(verifier, dict) else None
    uri = predicate.get("resourceUri")
    extension = predicate.get(REPORT_EXTENSION)
    time_verified = predicate.get("timeVerified")
    return Statement(subjects=subjects, result=result,
                     resource_uri=uri if isinstance(uri, str) else None,
                     verifier_id=verifier_id if isinstance(verifier_id, str) else None,
                     time_verified=time_verified if isinstance(time_verified, str) else None,
                     report=extension if isinstance(extension, dict) else {}, raw=data,
                     git_blobs=git_blobs)
