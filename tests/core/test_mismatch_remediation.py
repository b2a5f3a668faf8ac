"""A mismatch is first a suspicion of corruption or tampering: the fix a code's remediation
gives first never blesses the bytes found (regenerating the manifest, signing again), and the
codes about digests and sizes open with "Do not trust"."""

from __future__ import annotations

import re

import pytest

from meshcert.core.codes import CODES

MISMATCH_CODES = sorted(code for code in CODES if code.endswith("_mismatch"))
# Words that accept the bytes as found instead of doubting them
BLESSING = re.compile(r"regenerat|sign again|re-sign|sign the package again|certify and sign|"
                      r"recompute", re.IGNORECASE)
# The codes that say "these bytes are not the bytes that were declared, certified or signed"
BYTE_CODES = ["artifact_sha256_mismatch", "artifact_size_mismatch", "attestation_subject_mismatch",
              "hub_sha256_mismatch", "hub_size_mismatch", "package_identity_mismatch",
              "slice_digest_mismatch", "source_sha256_mismatch", "tensor_bytes_mismatch",
              "tensor_count_mismatch"]


def first_sentence(text: str) -> str:
    return re.split(r"(?<=\.)\s", text, maxsplit=1)[0]


def test_the_table_has_the_mismatch_codes_this_rule_is_about() -> None:
    assert set(BYTE_CODES) <= set(MISMATCH_CODES)
    assert len(MISMATCH_CODES) >= 30


@pytest.mark.parametrize("code", MISMATCH_CODES)
def test_no_mismatch_remediation_starts_by_blessing_the_bytes(code: str) -> None:
    entry = CODES[code]
    for text in (entry.remediation, *(r.remediation for r in entry.raised)):
        assert not BLESSING.search(first_sentence(text)), (code, text)


@pytest.mark.parametrize("code", BYTE_CODES)
def test_a_digest_or_size_mismatch_starts_from_distrust(code: str) -> None:
    text = CODES[code].remediation
    assert text.startswith("Do not trust"), text
    assert re.search(r"re-download|re-write|restore", text, re.IGNORECASE), text


def test_the_rule_catches_the_old_advice() -> None:
    """The remediations meshcert used to give fail the rule (it can fail)."""
    old = ["The file's content does not match the manifest: restore it or regenerate the "
           "manifest.",
           "Regenerate the manifest or restore the file: sizes differ.",
           "An artifact (or the manifest) changed after it was certified: its SHA-256 differs "
           "from the attested digest. Certify and sign the package again, or restore the "
           "certified bytes."]
    assert BLESSING.search(first_sentence(old[0]))
    assert BLESSING.search(first_sentence(old[1]))
    assert not old[2].startswith("Do not trust")
