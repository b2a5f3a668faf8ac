"""The finding codes attestation work emits (rows in meshcert/core/codes.py)."""

from __future__ import annotations

MISSING = "attestation_missing"
MALFORMED = "attestation_malformed"
SIGNATURE_INVALID = "attestation_signature_invalid"
UNTRUSTED_SIGNER = "attestation_untrusted_signer"
NOT_PASSED = "attestation_not_passed"
SUBJECT_MISMATCH = "attestation_subject_mismatch"
SUBJECT_MISSING = "attestation_subject_missing"
RESOURCE_MISMATCH = "attestation_resource_mismatch"
OTHER_COMMIT = "attestation_other_commit"
VERIFIED = "attestation_verified"

ATTESTATION_CODES = frozenset({
    MISSING, MALFORMED, SIGNATURE_INVALID, UNTRUSTED_SIGNER, NOT_PASSED, SUBJECT_MISMATCH,
    SUBJECT_MISSING, RESOURCE_MISMATCH, OTHER_COMMIT, VERIFIED})
