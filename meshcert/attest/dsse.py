"""DSSE v1 envelopes: the pre-authentication encoding, signing, parsing and verifying.

A `.intoto.jsonl` file holds one envelope per line; a line that is a Sigstore bundle
(`mediaType` application/vnd.dev.sigstore.bundle...) is kept as such for the keyless backend.
`keyid` is a hint only: verification tries every key it is given.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from meshcert.attest.keys import key_id
from meshcert.core.errors import MeshcertError

PAYLOAD_TYPE = "application/vnd.in-toto+json"
BUNDLE_MEDIA_PREFIX = "application/vnd.dev.sigstore.bundle"
MAX_FILE_BYTES = 4 * 1024 * 1024  # an envelope is a few KiB per hundred subjects
_URLSAFE = re.compile(r"^[A-Za-z0-9_-]*={0,2}$")


class EnvelopeError(MeshcertError, ValueError):
    """The attestation file or an envelope in it cannot be read (message names which)."""


@dataclass(frozen=True)
class Signature:
    keyid: str
    sig: bytes


@dataclass(frozen=True)
class Envelope:
    payload_type: str
    payload: bytes  # the raw statement bytes (not base64)
    signatures: tuple[Signature, ...] = ()
    line: int = 0  # 1-based line in the file it came from (0: made here)

    def to_json_line(self) -> str:
        return json.dumps({
            "payloadType": self.payload_type,
            "payload": base64.b64encode(self.payload).decode("ascii"),
            "signatures": [{"keyid": s.keyid, "sig": base64.b64encode(s.sig).decode("ascii")}
                           for s in self.signatures]}, separators=(",", ":")) + "\n"


@dataclass(frozen=True)
class Bundle:
    """A Sigstore bundle line, as parsed JSON (checked by meshcert.attest.sigstore_backend)."""

    data: dict[str, Any]
    line: int


@dataclass
class AttestationFile:
    envelopes: list[Envelope] = field(default_factory=list)
    bundles: list[Bundle] = field(default_factory=list)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def sign(payload: bytes, key: Ed25519PrivateKey, payload_type: str = PAYLOAD_TYPE) -> Envelope:
    sig = key.sign(pae(payload_type, payload))
    return Envelope(payload_type, payload, (Signature(key_id(key.public_key()), sig),))


def verifying_keys(envelope: Envelope, keys: list[Ed25519PublicKey]) -> list[Ed25519PublicKey]:
    """The keys (of `keys`) under which some signature of the envelope verifies."""
    message = pae(envelope.payload_type, envelope.payload)
    found: list[Ed25519PublicKey] = []
    for key in keys:
        for signature in envelope.signatures:
            try:
                key.verify(signature.sig, message)
            except InvalidSignature:
                continue
            found.append(key)
            break
    return found


def _b64(value: object, what: str) -> bytes:
    if not isinstance(value, str):
        raise EnvelopeError(f"{what} is not a base64 string")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        pass
    if _URLSAFE.match(value):  # DSSE allows URL-safe base64 too
        try:
            return base64.urlsafe_b64decode(value + "=" * (-len(value.rstrip("=")) % 4))
        except (binascii.Error, ValueError):
            pass
    raise EnvelopeError(f"{what} is not valid base64")


def parse_envelope(data: object, line: int = 0) -> Envelope:
    where = f"line {line}: " if line else ""
    if not isinstance(data, dict):
        raise EnvelopeError(f"{where}not a JSON object")
    payload_type = data.get("payloadType")
    if not isinstance(payload_type, str):
        raise EnvelopeError(f"{where}$.payloadType is missing")
    payload = _b64(data.get("payload"), f"{where}$.payload")
    raw_sigs = data.get("signatures")
    if not isinstance(raw_sigs, list) or not raw_sigs:
        raise EnvelopeError(f"{where}$.signatures is not a non-empty list")
    signatures: list[Signature] = []
    for i, item in enumerate(raw_sigs):
        if not isinstance(item, dict):
            raise EnvelopeError(f"{where}$.signatures[{i}] is not an object")
        keyid = item.get("keyid")
        signatures.append(Signature(keyid if isinstance(keyid, str) else "",
                                    _b64(item.get("sig"), f"{where}$.signatures[{i}].sig")))
    return Envelope(payload_type, payload, tuple(signatures), line)


def parse_lines(text: bytes, name: str) -> AttestationFile:
    """Every line of a `.intoto.jsonl` file: envelopes and Sigstore bundles."""
    if len(text) > MAX_FILE_BYTES:
        raise EnvelopeError(f"{name} is larger than the {MAX_FILE_BYTES >> 20} MiB limit of an "
                            "attestation file")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError:
        raise EnvelopeError(f"{name} is not UTF-8 text") from None
    out = AttestationFile()
    for number, raw in enumerate(decoded.splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise EnvelopeError(f"{name} line {number}: not JSON ({exc})") from None
        if isinstance(data, dict) and str(data.get("mediaType", "")).startswith(
                BUNDLE_MEDIA_PREFIX):
            out.bundles.append(Bundle(data, number))
            continue
        try:
            out.envelopes.append(parse_envelope(data, number))
        except EnvelopeError as exc:
            raise EnvelopeError(f"{name} {exc}") from None
    return out


def read_file(path: str | os.PathLike[str]) -> AttestationFile:
    """Read and parse an attestation file (at most MAX_FILE_BYTES + 1 bytes are read)."""
    name = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise FileNotFoundError(f"cannot read {name}: {exc.strerror or exc}") from None
    return parse_lines(data, name)
