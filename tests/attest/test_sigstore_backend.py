"""Keyless bundles, offline: a CI identity is a trust root like a key.

The bundles here are made by the test (no Fulcio, no Rekor, no network): a CA the test
creates stands for Fulcio's root, a leaf certificate carries the identity the way Fulcio's do
(SAN URI and the OIDC-issuer extension 1.3.6.1.4.1.57264.1.8), and the DSSE signature over the
statement is made with the leaf's P-256 key. The transparency-log proof is not checked by this
offline path (docs/attestation.md says so)."""

from __future__ import annotations

import base64
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from meshcert.attest import codes
from meshcert.attest.dsse import PAYLOAD_TYPE, pae
from meshcert.attest.sigstore_backend import BUNDLE_MEDIA_TYPE, ISSUER_V2_OID
from meshcert.attest.trust import load_trust
from meshcert.attest.verify import verify_ref
from tests.conftest import PackageFactory
from tests.support.attestations import certify_and_sign, keypair, statement_of

ISSUER = "https://token.actions.githubusercontent.com"
WORKFLOW = "https://github.com/Mesh-LLM/catalog/.github/workflows/certify.yml@refs/heads/main"
NOW = dt.datetime.now(dt.UTC)


def make_ca(name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(NOW - dt.timedelta(days=1))
            .not_valid_after(NOW + dt.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return key, cert


def make_leaf(ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate], subject: str,
              issuer: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    issuer_der = b"\x0c" + bytes([len(issuer)]) + issuer.encode()  # DER UTF8String
    cert = (x509.CertificateBuilder().subject_name(x509.Name([]))
            .issuer_name(ca[1].subject).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(NOW - dt.timedelta(minutes=5))
            .not_valid_after(NOW + dt.timedelta(minutes=5))
            .add_extension(x509.SubjectAlternativeName(
                [x509.UniformResourceIdentifier(subject)]), critical=True)
            .add_extension(x509.UnrecognizedExtension(
                x509.ObjectIdentifier(ISSUER_V2_OID), issuer_der), critical=False)
            .sign(ca[0], hashes.SHA256()))
    return key, cert


def make_bundle(statement: dict[str, Any], leaf: tuple[ec.EllipticCurvePrivateKey,
                                                       x509.Certificate]) -> dict[str, Any]:
    payload = json.dumps(statement).encode()
    sig = leaf[0].sign(pae(PAYLOAD_TYPE, payload), ec.ECDSA(hashes.SHA256()))
    der = leaf[1].public_bytes(serialization.Encoding.DER)
    return {"mediaType": BUNDLE_MEDIA_TYPE,
            "verificationMaterial": {
                "certificate": {"rawBytes": base64.b64encode(der).decode()},
                "tlogEntries": [{"integratedTime": str(int(NOW.timestamp()))}]},
            "dsseEnvelope": {"payloadType": PAYLOAD_TYPE,
                             "payload": base64.b64encode(payload).decode(),
                             "signatures": [{"sig": base64.b64encode(sig).decode()}]}}


@pytest.fixture
def package(packages: PackageFactory, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A package and the statement certification made of it (its key signature dropped)."""
    root = packages.build("llama").root
    att = tmp_path / "keyed.intoto.jsonl"
    certify_and_sign(str(root), keypair(tmp_path / "k"), att)
    return root, statement_of(att)


def trust_file(tmp_path: Path, root_pem: Path, subject: str = WORKFLOW) -> Path:
    path = tmp_path / "trust.toml"
    path.write_text(f'mode = "enforce"\nsigstore_roots = ["{root_pem.name}"]\n'
                    f'[[signer]]\noidc_issuer = "{ISSUER}"\nsubject = "{subject}"\n'
                    'repos = ["*"]\n')
    return path


def write_root(tmp_path: Path, ca: tuple[ec.EllipticCurvePrivateKey, x509.Certificate]
               ) -> Path:
    path = tmp_path / "fulcio-root.pem"
    path.write_bytes(ca[1].public_bytes(serialization.Encoding.PEM))
    return path


def run(root: Path, bundle: dict[str, Any], trust: Path, tmp_path: Path) -> list[str]:
    att = tmp_path / "keyless.intoto.jsonl"
    att.write_text(json.dumps(bundle) + "\n")
    verdict = verify_ref(str(root), str(att), load_trust(trust))
    return [f.code for f in verdict.findings] + (["VALID"] if verdict.valid else [])


def test_a_bundle_from_a_trusted_ci_identity_verifies(package: tuple[Path, dict[str, Any]],
                                                      tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    bundle = make_bundle(statement, make_leaf(ca, WORKFLOW, ISSUER))
    att = tmp_path / "keyless.intoto.jsonl"
    att.write_text(json.dumps(bundle) + "\n")
    verdict = verify_ref(str(root), str(att), load_trust(trust_file(tmp_path,
                                                                    write_root(tmp_path, ca))))
    assert verdict.valid and verdict.signer == f"{WORKFLOW} ({ISSUER})"


def test_a_subject_pattern_matches_a_workflow(package: tuple[Path, dict[str, Any]],
                                              tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    trust = trust_file(tmp_path, write_root(tmp_path, ca),
                       subject="https://github.com/Mesh-LLM/catalog/.github/workflows/*")
    assert run(root, make_bundle(statement, make_leaf(ca, WORKFLOW, ISSUER)), trust,
               tmp_path) == ["VALID"]


def test_another_identity_is_untrusted(package: tuple[Path, dict[str, Any]],
                                       tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    trust = trust_file(tmp_path, write_root(tmp_path, ca))
    fork = WORKFLOW.replace("Mesh-LLM", "someone")
    assert run(root, make_bundle(statement, make_leaf(ca, fork, ISSUER)), trust,
               tmp_path) == [codes.UNTRUSTED_SIGNER]
    assert run(root, make_bundle(statement, make_leaf(ca, WORKFLOW, "https://evil.example")),
               trust, tmp_path) == [codes.UNTRUSTED_SIGNER]


def test_a_certificate_from_another_ca_does_not_verify(package: tuple[Path, dict[str, Any]],
                                                       tmp_path: Path) -> None:
    root, statement = package
    trusted, rogue = make_ca("test fulcio"), make_ca("rogue")
    trust = trust_file(tmp_path, write_root(tmp_path, trusted))
    assert run(root, make_bundle(statement, make_leaf(rogue, WORKFLOW, ISSUER)), trust,
               tmp_path) == [codes.SIGNATURE_INVALID]


def test_a_changed_statement_does_not_verify(package: tuple[Path, dict[str, Any]],
                                             tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    bundle = make_bundle(statement, make_leaf(ca, WORKFLOW, ISSUER))
    statement["predicate"]["verificationResult"] = "PASSED "
    bundle["dsseEnvelope"]["payload"] = base64.b64encode(json.dumps(statement).encode()).decode()
    assert run(root, bundle, trust_file(tmp_path, write_root(tmp_path, ca)), tmp_path) == [
        codes.SIGNATURE_INVALID]


def test_a_signing_time_outside_the_certificate_s_life(package: tuple[Path, dict[str, Any]],
                                                       tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    bundle = make_bundle(statement, make_leaf(ca, WORKFLOW, ISSUER))
    later = int((NOW + dt.timedelta(hours=1)).timestamp())
    bundle["verificationMaterial"]["tlogEntries"][0]["integratedTime"] = str(later)
    assert run(root, bundle, trust_file(tmp_path, write_root(tmp_path, ca)), tmp_path) == [
        codes.SIGNATURE_INVALID]


def test_a_trusted_bundle_still_needs_matching_subjects(package: tuple[Path, dict[str, Any]],
                                                        tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    bundle = make_bundle(statement, make_leaf(ca, WORKFLOW, ISSUER))
    layer = sorted((root / "layers").glob("*.gguf"))[0]
    layer.write_bytes(layer.read_bytes() + b"\0")
    assert run(root, bundle, trust_file(tmp_path, write_root(tmp_path, ca)), tmp_path) == [
        codes.SUBJECT_MISMATCH]


def test_without_roots_a_bundle_cannot_be_verified_offline(
        package: tuple[Path, dict[str, Any]], tmp_path: Path) -> None:
    root, statement = package
    ca = make_ca("test fulcio")
    trust = tmp_path / "trust.toml"
    trust.write_text(f'mode = "enforce"\n[[signer]]\noidc_issuer = "{ISSUER}"\n'
                     f'subject = "{WORKFLOW}"\n')
    assert run(root, make_bundle(statement, make_leaf(ca, WORKFLOW, ISSUER)), trust,
               tmp_path) == [codes.SIGNATURE_INVALID]


def test_a_bundle_without_its_parts_is_malformed(package: tuple[Path, dict[str, Any]],
                                                 tmp_path: Path) -> None:
    root, _ = package
    ca = make_ca("test fulcio")
    assert run(root, {"mediaType": BUNDLE_MEDIA_TYPE},
               trust_file(tmp_path, write_root(tmp_path, ca)), tmp_path) == [codes.MALFORMED]
