"""One certification job: the package at a resolved commit certified package-only and
header-only (the Hub's LFS SHA-256 as the digests, as `models certify hf://...` does), the
verdict signed when it can be (docs/attestation.md), and the result the comments and the status
page show. A job's key binds its verdict to what produced it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meshcert.core.version import MESH_LLM_VERSION, __version__

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.certify.report import CertReport

MAX_FINDINGS = 30  # per package in a comment; the rest are counted


def job_key(repo: str, commit: str, trust_digest: str) -> str:
    """(repo, resolved commit, meshcert version, mesh-llm rules version, trust digest)."""
    parts = [repo.lower(), commit.lower(), __version__, MESH_LLM_VERSION, trust_digest]
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Certified:
    result: dict[str, Any]  # what a comment and /status show (JSON-able)
    envelope: str | None  # the signed .intoto.jsonl line, None when none can be made


def certify_commit(repo: str, commit: str, key: Ed25519PrivateKey,
                   verifier_id: str | None = None) -> Certified:
    """Certify hf://repo@commit and sign the verdict. Never raises for the package's sake: a
    certification that could not finish is an `incomplete` result (and nothing is signed)."""
    from meshcert.attest.sign import sign_report
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.view import CertOptions

    ref = f"hf://{repo}@{commit}"
    report = certify_package(CertRequest(model=ref, options=CertOptions(verify_sha256=False)))
    signed = sign_report(report, key, "", verifier_id=verifier_id)
    if isinstance(signed, str):
        return Certified(result_of(report, repo, commit, unsigned=signed), None)
    return Certified(result_of(signed.report, repo, commit, unsigned=None),
                     signed.envelope.to_json_line())


def result_of(report: CertReport, repo: str, commit: str, *, unsigned: str | None
              ) -> dict[str, Any]:
    from meshcert.reports.certification.verdict import verdict

    findings = [{"code": f.code, "severity": f.severity, "message": f.message,
                 "remediation": f.remediation, "path": f.path} for f in report.findings
                if f.severity != "info"]
    return {
        "repo": repo, "commit": commit, "status": report.status,
        "sentence": verdict(report).sentence(), "findings": findings[:MAX_FINDINGS],
        "more_findings": max(0, len(findings) - MAX_FINDINGS),
        "meshcert": report.tool.version,
        "mesh_llm_rules": report.tool.mesh_llm_version or MESH_LLM_VERSION,
        "finished_at": report.finished_at, "attestation_url": None, "unsigned": unsigned,
    }


def failed_result(repo: str, commit: str | None, why: str) -> dict[str, Any]:
    """A package the service could not certify at all (its repo or commit is gone)."""
    return {"repo": repo, "commit": commit, "status": "incomplete",
            "sentence": f"certification incomplete: {why}", "findings": [],
            "more_findings": 0, "meshcert": __version__, "mesh_llm_rules": MESH_LLM_VERSION,
            "finished_at": None, "attestation_url": None, "unsigned": why}
