"""Keyless (Sigstore) attestations: a CI identity (OIDC issuer + subject pattern) is a trust
root like a key.

Signing needs the optional extra `meshcert[sigstore]` (the `sigstore` package) and an OIDC
token from CI; it is not exercised here (no network, no OIDC provider): see
docs/attestation.md. Verification has an offline path, used when the trust file lists
`sigstore_roots` (PEM CA certificates): the bundle's leaf certificate must be issued by one of
them and valid at the bundle's log time, its identity (SAN and the Fulcio issuer extension) must
match a trusted identity for the repo, and the DSSE signature must verify under the
certificate's key. That path does not check the transparency log's inclusion proof or signed
entry timestamp (it has no Rekor key offline); without roots, the `sigstore` package verifies
against the public-good instance.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from meshcert.attest import codes
from meshcert.attest.dsse import PAYLOAD_TYPE, pae
from meshcert.attest.package_state import PackageState
from meshcert.attest.statement import Statement, StatementError, parse_statement
from meshcert.attest.trust import TrustPolicy
from meshcert.core.errors import ErrorKind, MeshcertError
from meshcert.core.findings import Finding, finding

BUNDLE_MEDIA_TYPE = "application/vnd.dev.sigstore.bundle.v0.3+json"
# Fulcio's certificate extensions: the OIDC issuer (v2: a DER UTF8String; v1: raw bytes)
ISSUER_V2_OID = "1.3.6.1.4.1.57264.1.8"
ISSUER_V1_OID = "1.3.6.1.4.1.57264.1.1"


class SigstoreUnavailable(MeshcertError, RuntimeError):
    """The `sigstore` package is not installed (pip install 'meshcert[sigstore]')."""

    kind = ErrorKind.USAGE


@dataclass
class BundleCheck:
    statement: Statement | None = None
    signer: str | None = None  # "subject (issuer)" once trusted
    findings: list[Finding] = field(default_factory=list)


class SigstoreSigner:
    """Keyless signing through the `sigstore` package with an ambient CI OIDC token."""

    def __init__(self) -> None:
        try:
            import sigstore  # noqa: F401
        except ImportError:
            raise SigstoreUnavailable("keyless signing needs pip install "
                                      "'meshcert[sigstore]'") from None

    def sign_statement(self, statement: bytes) -> dict[str, Any]:  # pragma: no cover - network
        import json

        from sigstore.dsse import Statement as SigstoreStatement
        from sigstore.oidc import IdentityToken, detect_credential
        from sigstore.sign import SigningContext

        token = detect_credential()
        if token is None:
            raise SigstoreUnavailable("no ambient OIDC credential (run in CI with id-token)")
        context = SigningContext.production()
        with context.signer(IdentityToken(token)) as signer:
            bundle = signer.sign_dsse(SigstoreStatement(statement))
        return dict(json.loads(bundle.to_json()))


def _b64(value: object) -> bytes | None:
    if not isinstance(value, str):
        return None
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None


def _identity(cert: Any) -> tuple[str | None, str | None]:
    from cryptography import x509

    subject: str | None = None
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        names = san.get_values_for_type(x509.UniformResourceIdentifier) or \
            san.get_values_for_type(x509.RFC822Name)
        subject = names[0] if names else None
    except x509.ExtensionNotFound:
        pass
    issuer: str | None = None
    for ext in cert.extensions:
        if ext.oid.dotted_string == ISSUER_V2_OID:
            raw = ext.value.value
            # DER UTF8String: tag 0x0c, short length
            issuer = raw[2:].decode("utf-8", "replace") if raw[:1] == b"\x0c" else None
        elif ext.oid.dotted_string == ISSUER_V1_OID and issuer is None:
            issuer = ext.value.value.decode("utf-8", "replace")
    return subject, issuer


def _verify_sig(cert: Any, signature: bytes, message: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519

    key = cert.public_key()
    try:
        if isinstance(key, ec.EllipticCurvePublicKey):
            key.verify(signature, message, ec.ECDSA(hashes.SHA256()))
        elif isinstance(key, ed25519.Ed25519PublicKey):
            key.verify(signature, message)
        else:
            return False
    except InvalidSignature:
        return False
    return True


def _issued_by_root(cert: Any, roots: list[Any]) -> bool:
    for root in roots:
        try:
            cert.verify_directly_issued_by(root)
        except (ValueError, TypeError, Exception):  # noqa: B014 - any failure: not this root
            continue
        return True
    return False


def _load_roots(paths: list[str]) -> list[Any]:
    from cryptography import x509

    roots: list[Any] = []
    for path in paths:
        with open(path, "rb") as handle:
            roots.extend(x509.load_pem_x509_certificates(handle.read()))
    return roots


def verify_bundle(data: dict[str, Any], policy: TrustPolicy, state: PackageState, where: str
                  ) -> BundleCheck:
    """Check one bundle line: its statement and the trusted CI identity that signed it."""
    from cryptography import x509

    out = BundleCheck()
    envelope = data.get("dsseEnvelope")
    material = data.get("verificationMaterial")
    cert_data = material.get("certificate") if isinstance(material, dict) else None
    raw_cert = _b64(cert_data.get("rawBytes")) if isinstance(cert_data, dict) else None
    if not isinstance(envelope, dict) or raw_cert is None:
        out.findings.append(finding(codes.MALFORMED, f"{where}: a Sigstore bundle without a "
                                    "DSSE envelope and a leaf certificate"))
        return out
    payload = _b64(envelope.get("payload"))
    sigs = envelope.get("signatures")
    sig = _b64(sigs[0].get("sig")) if isinstance(sigs, list) and sigs and isinstance(
        sigs[0], dict) else None
    if envelope.get("payloadType") != PAYLOAD_TYPE or payload is None or sig is None:
        out.findings.append(finding(codes.MALFORMED, f"{where}: the bundle's DSSE envelope is "
                                    f"not a signed {PAYLOAD_TYPE} payload"))
        return out
    try:
        cert = x509.load_der_x509_certificate(raw_cert)
        out.statement = parse_statement(payload)
    except StatementError as exc:
        out.findings.append(finding(codes.MALFORMED, f"{where}: {exc}"))
        return out
    except ValueError:
        out.findings.append(finding(codes.MALFORMED, f"{where}: the bundle's certificate is "
                                    "not DER X.509"))
        return out
    if not policy.sigstore_roots:
        out.findings.append(finding(codes.SIGNATURE_INVALID, f"{where}: a keyless bundle, but "
                                    "the trust file lists no sigstore_roots to verify it "
                                    "offline"))
        return out
    try:
        roots = _load_roots(policy.sigstore_roots)
    except (OSError, ValueError) as exc:
        out.findings.append(finding(codes.SIGNATURE_INVALID, f"{where}: cannot read "
                                    f"sigstore_roots: {exc}"))
        return out
    if not _issued_by_root(cert, roots) or not _verify_sig(
            cert, sig, pae(PAYLOAD_TYPE, payload)) or not _valid_at_log_time(
            cert, material if isinstance(material, dict) else {}):
        out.findings.append(finding(codes.SIGNATURE_INVALID, f"{where}: the bundle's signature "
                                    "or certificate does not verify under the sigstore roots"))
        return out
    subject, issuer = _identity(cert)
    repo = state.repo or _repo_of(out.statement.resource_uri)
    trusted = next((s for s in policy.identities_for(repo)
                    if subject and issuer and s.matches(issuer, subject)), None)
    if trusted is None:
        out.findings.append(finding(codes.UNTRUSTED_SIGNER, f"{where}: signed by {subject} "
                                    f"({issuer}), which the trust policy does not trust for "
                                    f"{repo or 'local packages'}"))
        return out
    out.signer = f"{subject} ({issuer})"
    return out


def _repo_of(uri: str | None) -> str | None:
    if uri and uri.startswith("hf://"):
        return uri[len("hf://"):].partition("@")[0] or None
    return None


def _valid_at_log_time(cert: Any, material: dict[str, Any]) -> bool:
    """Fulcio certificates live minutes: the signing time is the log entry's integratedTime."""
    entries = material.get("tlogEntries")
    first = entries[0] if isinstance(entries, list) and entries else None
    raw = first.get("integratedTime") if isinstance(first, dict) else None
    try:
        when = datetime.fromtimestamp(int(raw), UTC) if raw is not None else None
    except (TypeError, ValueError, OverflowError, OSError):
        return False
    if when is None:
        return False
    return bool(cert.not_valid_before_utc <= when <= cert.not_valid_after_utc)
