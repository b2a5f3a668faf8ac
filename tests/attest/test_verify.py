"""Verifying a local package's attestation: the good case and each tampering, refused with its
code (docs/attestation.md, verification steps)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meshcert.attest import codes
from meshcert.attest.dsse import sign
from meshcert.attest.keys import KeyPair, load_private, load_public
from meshcert.attest.statement import canonical_json
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import Verification, verify_ref, with_mode
from meshcert.core.usage import OptionError
from tests.conftest import PackageFactory
from tests.support.attestations import (
    certify_and_sign,
    edit_statement,
    flip_last_byte,
    flip_signature,
    keypair,
    statement_of,
    write_statement,
)


@pytest.fixture
def signer(tmp_path: Path) -> KeyPair:
    return keypair(tmp_path / "keys")


@pytest.fixture
def signed(packages: PackageFactory, signer: KeyPair, tmp_path: Path) -> tuple[Path, Path]:
    root = packages.build("llama").root
    out = tmp_path / "cert.intoto.jsonl"
    certify_and_sign(str(root), signer, out)
    return root, out


def trusting(*pairs: KeyPair) -> TrustPolicy:
    return TrustPolicy.of_keys([load_public(p.key_id) for p in pairs])


def check(root: Path, att: Path, *pairs: KeyPair) -> Verification:
    return verify_ref(str(root), str(att), trusting(*pairs))


def codes_of(verdict: Verification) -> list[str]:
    return [f.code for f in verdict.findings]


def test_a_signed_package_verifies(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    verdict = check(root, att, signer)
    assert verdict.valid and verdict.findings == []
    assert verdict.signer == signer.key_id and verdict.result == "PASSED"
    assert verdict.subjects == len(statement_of(att)["subject"])


def test_an_artifact_byte_changed(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    layer = sorted((root / "layers").glob("*.gguf"))[1]
    flip_last_byte(layer)
    verdict = check(root, att, signer)
    assert not verdict.valid
    assert codes_of(verdict) == [codes.SUBJECT_MISMATCH]
    assert verdict.findings[0].path == f"layers/{layer.name}"


def test_the_manifest_changed(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    manifest = root / "model-package.json"
    manifest.write_bytes(manifest.read_bytes() + b"\n")
    verdict = check(root, att, signer)
    assert codes_of(verdict) == [codes.SUBJECT_MISMATCH]
    assert verdict.findings[0].message.endswith("the manifest changed after it was certified")


def test_an_artifact_file_removed(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    layer = sorted((root / "layers").glob("*.gguf"))[0]
    layer.unlink()
    verdict = check(root, att, signer)
    assert codes_of(verdict) == [codes.SUBJECT_MISMATCH]
    assert "no such file" in verdict.findings[0].message


def test_the_statement_changed_after_signing(signed: tuple[Path, Path],
                                             signer: KeyPair) -> None:
    root, att = signed
    edit_statement(att, lambda s: s["predicate"].update(timeVerified="2030-01-01T00:00:00Z"),
                   key=None)
    assert codes_of(check(root, att, signer)) == [codes.SIGNATURE_INVALID]


def test_the_signature_changed(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    flip_signature(att)
    assert codes_of(check(root, att, signer)) == [codes.SIGNATURE_INVALID]


def test_a_key_the_policy_does_not_know(signed: tuple[Path, Path], signer: KeyPair,
                                        tmp_path: Path) -> None:
    """Spec step 3: the envelope's key id is only a claim, so a signature by a key the policy
    does not know verifies under no known key: `attestation_signature_invalid`, not "untrusted"
    (which would mean the signature was checked and holds). The claimed id is named."""
    root, att = signed
    other = keypair(tmp_path / "other", "other")
    verdict = check(root, att, other)
    assert codes_of(verdict) == [codes.SIGNATURE_INVALID]
    assert signer.key_id in verdict.findings[0].message and not verdict.valid


def test_a_known_key_the_policy_does_not_trust_for_this_repo(
        signed: tuple[Path, Path], signer: KeyPair, tmp_path: Path) -> None:
    """The signer's key is in the trust file, next to a key trusted for every repo, but is
    itself trusted only for meshllm/*: the signature verifies, the signer is untrusted here."""
    from meshcert.attest.trust import KeySigner

    root, att = signed
    other = keypair(tmp_path / "other", "other")
    policy = TrustPolicy(mode="enforce", keys=[
        KeySigner(load_public(other.key_id), ("*",)),
        KeySigner(load_public(signer.key_id), ("meshllm/*",))])
    verdict = verify_ref(str(root), str(att), policy)
    assert codes_of(verdict) == [codes.UNTRUSTED_SIGNER]
    assert signer.key_id in verdict.findings[0].message


def test_a_signer_trusted_only_for_other_repos(signed: tuple[Path, Path],
                                               signer: KeyPair) -> None:
    from meshcert.attest.trust import KeySigner

    root, att = signed
    policy = TrustPolicy(mode="enforce",
                         keys=[KeySigner(load_public(signer.key_id), ("meshllm/*",))])
    assert codes_of(verify_ref(str(root), str(att), policy)) == [codes.UNTRUSTED_SIGNER]


def test_a_missing_artifact_subject(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    dropped: list[str] = []

    def drop_last(statement: dict[str, Any]) -> None:
        dropped.append(statement["subject"].pop()["name"])

    edit_statement(att, drop_last, key=signer)  # re-signed: only the subject list is short
    verdict = check(root, att, signer)
    assert codes_of(verdict) == [codes.SUBJECT_MISSING]
    assert verdict.findings[0].path == dropped[0]


def test_a_failed_result(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    edit_statement(att, lambda s: s["predicate"].update(verificationResult="FAILED"),
                   key=signer)
    verdict = check(root, att, signer)
    assert codes_of(verdict) == [codes.NOT_PASSED]
    assert verdict.result == "FAILED" and not verdict.valid


def test_a_failed_certification_signed_as_such(packages: PackageFactory, signer: KeyPair,
                                               tmp_path: Path) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m.update(format="nope"))
    att = tmp_path / "failed.intoto.jsonl"
    signed = certify_and_sign(str(info.root), signer, att)
    assert signed.report.attestation is not None
    assert signed.report.attestation.result == "FAILED"
    verdict = check(info.root, att, signer)
    assert codes_of(verdict) == [codes.NOT_PASSED]
    assert "invalid_format" in verdict.findings[0].message


def test_a_wrong_payload_type(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    payload = canonical_json(statement_of(att))
    envelope = sign(payload, load_private(signer.private_path), payload_type="text/plain")
    att.write_text(envelope.to_json_line())
    verdict = check(root, att, signer)
    assert codes_of(verdict) == [codes.MALFORMED]
    assert "payloadType 'text/plain'" in verdict.findings[0].message


def test_a_payload_that_is_no_statement(signed: tuple[Path, Path], signer: KeyPair) -> None:
    root, att = signed
    write_statement(att, {"_type": "something else"}, key=signer)
    assert codes_of(check(root, att, signer)) == [codes.MALFORMED]


@pytest.mark.parametrize("content", [b"", b"\n\n"])
def test_an_empty_file_is_missing(signed: tuple[Path, Path], signer: KeyPair,
                                  content: bytes) -> None:
    root, att = signed
    att.write_bytes(content)
    assert codes_of(check(root, att, signer)) == [codes.MISSING]


def test_the_default_location_inside_the_package(signed: tuple[Path, Path],
                                                  signer: KeyPair) -> None:
    root, att = signed
    missing = verify_ref(str(root), None, trusting(signer))
    assert codes_of(missing) == [codes.MISSING]
    (root / "attestations").mkdir()
    (root / "attestations" / "meshcert.intoto.jsonl").write_bytes(att.read_bytes())
    assert verify_ref(str(root), None, trusting(signer)).valid


def test_one_good_envelope_among_bad_ones_is_enough(signed: tuple[Path, Path],
                                                    signer: KeyPair, tmp_path: Path) -> None:
    root, att = signed
    good = att.read_text()
    other = keypair(tmp_path / "o", "o")
    foreign = sign(b"{}", load_private(other.private_path)).to_json_line()
    att.write_text(foreign + good)
    verdict = check(root, att, signer)
    assert verdict.valid and verdict.signer == signer.key_id


def test_the_refusal_explains_the_envelope_that_got_furthest(signed: tuple[Path, Path],
                                                             signer: KeyPair,
                                                             tmp_path: Path) -> None:
    root, att = signed
    flip_last_byte(sorted((root / "layers").glob("*.gguf"))[0])
    other = keypair(tmp_path / "o", "o")
    foreign = sign(b"{}", load_private(other.private_path)).to_json_line()
    att.write_text(foreign + att.read_text())
    assert codes_of(check(root, att, signer)) == [codes.SUBJECT_MISMATCH]


def test_bad_arguments_are_usage_errors(tmp_path: Path, signer: KeyPair) -> None:
    with pytest.raises(OptionError, match="not a package directory"):
        verify_ref(str(tmp_path / "nope"), None, trusting(signer))
    with pytest.raises(OptionError, match="GGUF file"):
        verify_ref("model.gguf", None, trusting(signer))


def test_warn_mode_turns_the_errors_into_warnings(signed: tuple[Path, Path],
                                                  signer: KeyPair) -> None:
    root, att = signed
    flip_signature(att)
    findings = check(root, att, signer).findings
    assert [f.severity for f in with_mode(findings, "warn")] == ["warning"]
    assert [f.severity for f in with_mode(findings, "enforce")] == ["error"]
