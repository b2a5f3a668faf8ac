"""Sign a certification report: the statement, its DSSE envelope, the `.intoto.jsonl` line.

The report records what was signed (`attestation`: signer, result, subject count, file), so
the cert.json hashed into the statement is the one written beside it.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING

from meshcert.attest.dsse import Envelope, sign
from meshcert.attest.keys import key_id
from meshcert.attest.statement import (
    VerdictOptions,
    build_statement,
    canonical_json,
    subjects_of,
    unattestable_reason,
)

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.certify.report import CertReport

SUFFIX = ".intoto.jsonl"


@dataclass(frozen=True)
class Signed:
    report: CertReport  # with its `attestation` summary set
    report_json: str  # the cert.json text whose SHA-256 the statement holds
    envelope: Envelope
    path: str


def default_attestation_path(report_out: str | None) -> str:
    """`<report stem>.intoto.jsonl` beside the report (cert.json -> cert.intoto.jsonl)."""
    base = report_out or "cert.json"
    stem, ext = os.path.splitext(base)
    return (stem if ext.lower() == ".json" else base) + SUFFIX


def sign_report(report: CertReport, key: Ed25519PrivateKey, path: str, *,
                options: VerdictOptions | None = None, verifier_id: str | None = None
                ) -> Signed | str:
    """The signed attestation of `report`, or why none can be made."""
    from meshcert.certify.report import AttestationSummary

    reason = unattestable_reason(report)
    if reason is not None:
        return reason
    signer = key_id(key.public_key())
    summary = AttestationSummary(
        signer=signer, result="PASSED" if report.status == "passed" else "FAILED",
        subjects=len(subjects_of(report)), file=path)
    report = report.model_copy(update={"attestation": summary})
    text = report.to_json()
    statement = build_statement(report, report_sha256=hashlib.sha256(text.encode()).hexdigest(),
                                verifier_id=verifier_id or f"urn:meshcert:verifier:{signer}",
                                options=options)
    return Signed(report, text, sign(canonical_json(statement), key), path)


def write_attestation(path: str, envelopes: list[Envelope]) -> None:
    """Write the `.intoto.jsonl` file atomically (one envelope per line)."""
    from meshcert.core.atomic import write_atomic

    write_atomic(path, "".join(e.to_json_line() for e in envelopes))
