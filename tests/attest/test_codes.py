"""Issue 28's finding codes, exactly these names and severities, each with a remediation."""

from __future__ import annotations

import pytest

from meshcert.attest import codes
from meshcert.core.codes import CODES

ISSUE_28_CODES = {
    "attestation_missing": "error", "attestation_malformed": "error",
    "attestation_signature_invalid": "error", "attestation_untrusted_signer": "error",
    "attestation_not_passed": "error", "attestation_subject_mismatch": "error",
    "attestation_subject_missing": "error", "attestation_resource_mismatch": "error",
    # meshcert's own additions: a later commit with the same subjects, and a catalog package
    # accepted from its attestation (--trust-attested)
    "attestation_other_commit": "info", "attestation_verified": "info",
}


@pytest.mark.parametrize(("code", "severity"), sorted(ISSUE_28_CODES.items()))
def test_the_code_is_catalogued(code: str, severity: str) -> None:
    assert CODES[code].severity == severity
    assert CODES[code].group == "attestation"
    assert CODES[code].remediation.strip()


def test_the_module_names_exactly_these() -> None:
    assert set(ISSUE_28_CODES) == codes.ATTESTATION_CODES
    assert (codes.MISSING, codes.SUBJECT_MISMATCH, codes.OTHER_COMMIT) == (
        "attestation_missing", "attestation_subject_mismatch", "attestation_other_commit")
