"""DSSE envelopes: the pre-authentication encoding, signing, and every way a file can be bad."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from meshcert.attest.dsse import (
    MAX_FILE_BYTES,
    PAYLOAD_TYPE,
    EnvelopeError,
    pae,
    parse_lines,
    read_file,
    sign,
    verifying_keys,
)
from meshcert.attest.keys import key_id


def test_pae_matches_dsse_s_own_test_vector() -> None:
    # the vector of the DSSE v1 protocol document (quoted in shared/spec/attestation.md)
    assert pae("http://example.com/HelloWorld", b"hello world") == \
        b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"


def test_lengths_are_bytes_not_characters() -> None:
    assert pae("t", "é".encode()) == b"DSSEv1 1 t 2 \xc3\xa9"


def test_a_signed_envelope_round_trips_and_verifies_under_its_key_only() -> None:
    key, other = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    envelope = sign(b'{"a":1}', key)
    assert envelope.signatures[0].keyid == key_id(key.public_key())
    parsed = parse_lines(envelope.to_json_line().encode(), "f").envelopes[0]
    assert parsed.payload == b'{"a":1}' and parsed.payload_type == PAYLOAD_TYPE
    assert verifying_keys(parsed, [other.public_key(), key.public_key()]) == [key.public_key()]
    assert verifying_keys(parsed, [other.public_key()]) == []


def test_the_signature_covers_the_payload_type() -> None:
    key = Ed25519PrivateKey.generate()
    envelope = sign(b"x", key)
    line = json.loads(envelope.to_json_line())
    line["payloadType"] = "text/plain"
    parsed = parse_lines(json.dumps(line).encode(), "f").envelopes[0]
    assert verifying_keys(parsed, [key.public_key()]) == []


def test_several_envelopes_one_per_line_and_blank_lines_skipped() -> None:
    key = Ed25519PrivateKey.generate()
    text = sign(b"1", key).to_json_line() + "\n" + sign(b"2", key).to_json_line()
    parsed = parse_lines(text.encode(), "f")
    assert [e.payload for e in parsed.envelopes] == [b"1", b"2"]
    assert [e.line for e in parsed.envelopes] == [1, 3]


def test_a_sigstore_bundle_line_is_kept_apart() -> None:
    line = json.dumps({"mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json"})
    parsed = parse_lines(line.encode(), "f")
    assert parsed.envelopes == [] and len(parsed.bundles) == 1


GOOD = sign(b"{}", Ed25519PrivateKey.generate()).to_json_line()


@pytest.mark.parametrize(("text", "says"), [
    (GOOD[: len(GOOD) // 2], "not JSON"),  # truncated
    ("not json at all\n", "not JSON"),
    ('["a list"]\n', "not a JSON object"),
    (json.dumps({"payloadType": PAYLOAD_TYPE, "payload": "@@@!!", "signatures": [
        {"keyid": "", "sig": "AAAA"}]}), "$.payload is not valid base64"),
    (json.dumps({"payloadType": PAYLOAD_TYPE, "payload": "e30=", "signatures": [
        {"keyid": "", "sig": "%%%"}]}), "$.signatures[0].sig is not valid base64"),
    (json.dumps({"payloadType": PAYLOAD_TYPE, "payload": "e30=", "signatures": []}),
     "$.signatures is not a non-empty list"),
    (json.dumps({"payload": "e30=", "signatures": [{"sig": "AAAA"}]}), "$.payloadType"),
])
def test_bad_lines_are_errors_naming_the_file_and_line(text: str, says: str) -> None:
    with pytest.raises(EnvelopeError) as caught:
        parse_lines(text.encode(), "att.intoto.jsonl")
    assert str(caught.value).startswith("att.intoto.jsonl line 1")
    assert says in str(caught.value)


def test_a_10_mb_file_is_refused_without_being_parsed(tmp_path: Path) -> None:
    path = tmp_path / "huge.intoto.jsonl"
    path.write_bytes(b" " * (10 * 1024 * 1024))
    with pytest.raises(EnvelopeError, match="huge.intoto.jsonl is larger than the 4 MiB"):
        read_file(path)
    assert MAX_FILE_BYTES < 10 * 1024 * 1024


def test_non_utf8_bytes_are_an_error() -> None:
    with pytest.raises(EnvelopeError, match="not UTF-8"):
        parse_lines(b"\xff\xfe{}", "f")


def test_urlsafe_base64_is_accepted() -> None:
    payload = b"\xfb\xff"  # '+/' in standard base64, '-_' in URL-safe
    line = {"payloadType": PAYLOAD_TYPE,
            "payload": base64.urlsafe_b64encode(payload).decode(),
            "signatures": [{"keyid": "", "sig": "AAAA"}]}
    assert parse_lines(json.dumps(line).encode(), "f").envelopes[0].payload == payload
