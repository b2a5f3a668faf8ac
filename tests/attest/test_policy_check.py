"""A trust policy during certification: enforce fails an unattested package, warn passes it
with a warning, and a valid attestation is checked against the facts the run gathered."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from meshcert.attest import codes
from meshcert.attest.keys import KeyPair, load_public
from meshcert.attest.package_state import ATTESTATION_PATH
from meshcert.attest.policy_check import trust_gate
from meshcert.attest.trust import Mode, TrustPolicy
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from tests.conftest import PackageFactory
from tests.support.attestations import certify_and_sign, flip_last_byte, keypair
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub


@pytest.fixture
def signer(tmp_path: Path) -> KeyPair:
    return keypair(tmp_path / "keys")


def policy(signer: KeyPair, mode: Mode) -> TrustPolicy:
    return TrustPolicy.of_keys([load_public(signer.key_id)], mode=mode)


def certify_under(ref: str, trust: TrustPolicy, attestation: str | None = None, **options: Any
                  ) -> tuple[str, list[tuple[str, str]]]:
    report = certify_package(CertRequest(model=ref, options=CertOptions(**options),
                                         extra_findings=trust_gate(trust, attestation)))
    return report.status, [(f.code, f.severity) for f in report.findings
                           if f.code.startswith("attestation_")]


def test_enforce_fails_an_unattested_package(packages: PackageFactory,
                                             signer: KeyPair) -> None:
    root = packages.build("llama").root
    assert certify_under(str(root), policy(signer, "enforce")) == (
        "failed", [(codes.MISSING, "error")])


def test_warn_passes_it_with_a_warning(packages: PackageFactory, signer: KeyPair) -> None:
    root = packages.build("llama").root
    assert certify_under(str(root), policy(signer, "warn")) == (
        "passed", [(codes.MISSING, "warning")])


def test_off_looks_at_nothing(packages: PackageFactory, signer: KeyPair) -> None:
    root = packages.build("llama").root
    assert certify_under(str(root), policy(signer, "off")) == ("passed", [])


def test_enforce_passes_an_attested_package_and_refuses_a_changed_one(
        packages: PackageFactory, signer: KeyPair, tmp_path: Path) -> None:
    root = packages.build("llama").root
    att = root / ATTESTATION_PATH
    att.parent.mkdir()
    certify_and_sign(str(root), signer, att)
    assert certify_under(str(root), policy(signer, "enforce")) == ("passed", [])
    flip_last_byte(sorted((root / "layers").glob("*.gguf"))[0])
    status, found = certify_under(str(root), policy(signer, "enforce"))
    assert status == "failed" and (codes.SUBJECT_MISMATCH, "error") in found


def test_an_hf_package_s_attestation_is_read_from_the_repo(
        hub: FakeHub, packages: PackageFactory, signer: KeyPair,  # noqa: F811
        tmp_path: Path) -> None:
    repo = "meshllm/tiny"
    certified = hub.publish_dir(repo, packages.build("llama").root)
    att = tmp_path / "a.intoto.jsonl"
    certify_and_sign(f"hf://{repo}@{certified}", signer, att)
    later = hub.commit(repo, {ATTESTATION_PATH: att.read_bytes()}, replace_all=False)
    status, found = certify_under(f"hf://{repo}@{later}", policy(signer, "enforce"),
                                  verify_sha256=False)
    assert status == "passed" and found == [(codes.OTHER_COMMIT, "info")]
    status, found = certify_under(f"hf://{repo}@{certified}", policy(signer, "enforce"),
                                  verify_sha256=False)
    assert status == "failed" and found == [(codes.MISSING, "error")]
