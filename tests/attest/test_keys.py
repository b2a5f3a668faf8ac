"""Signing keys: keygen's files, key ids, and every wrong key file named in its error."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from meshcert.attest.keys import (
    PASSPHRASE_ENV,
    KeyFileError,
    generate,
    key_id,
    load_private,
    load_public,
    public_from_key_id,
)


def test_keygen_writes_a_0600_pkcs8_key_and_a_pem_public_key(tmp_path: Path) -> None:
    pair = generate(tmp_path / "release")
    assert pair.private_path.name == "release.key" and pair.public_path.name == "release.pub"
    assert stat.S_IMODE(pair.private_path.stat().st_mode) == 0o600
    assert pair.private_path.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert pair.public_path.read_text().startswith("-----BEGIN PUBLIC KEY-----")
    public = load_public(str(pair.public_path))
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    assert pair.key_id == "ed25519:" + raw.hex() and len(raw.hex()) == 64
    assert key_id(load_private(pair.private_path).public_key()) == pair.key_id


def test_keygen_never_overwrites_a_key(tmp_path: Path) -> None:
    generate(tmp_path / "k")
    with pytest.raises(KeyFileError, match="exists"):
        generate(tmp_path / "k")


def test_a_key_id_is_a_trusted_key_too(tmp_path: Path) -> None:
    pair = generate(tmp_path / "k")
    assert key_id(load_public(pair.key_id)) == pair.key_id
    assert key_id(public_from_key_id(pair.key_id.upper().replace("ED25519", "ed25519"))) \
        == pair.key_id
    with pytest.raises(KeyFileError, match="ed25519:<64 hex>"):
        public_from_key_id("ed25519:abc")


def test_a_public_key_where_a_private_one_is_needed(tmp_path: Path) -> None:
    pair = generate(tmp_path / "k")
    with pytest.raises(KeyFileError, match=r"k\.pub holds a public key"):
        load_private(pair.public_path)


def test_a_private_key_is_never_taken_as_a_trusted_key(tmp_path: Path) -> None:
    pair = generate(tmp_path / "k")
    with pytest.raises(KeyFileError, match=r"k\.key holds a private key"):
        load_public(str(pair.private_path))


def _ec_key(path: Path) -> None:
    key = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                       serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))


def test_a_key_of_the_wrong_kind(tmp_path: Path) -> None:
    _ec_key(tmp_path / "ec.key")
    with pytest.raises(KeyFileError, match=r"ec\.key holds an EC key, not an Ed25519 key"):
        load_private(tmp_path / "ec.key")


def test_an_encrypted_key_needs_its_passphrase(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    pair = generate(tmp_path / "k")
    key = load_private(pair.private_path)
    locked = tmp_path / "locked.key"
    locked.write_bytes(key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(b"s3cret")))
    monkeypatch.delenv(PASSPHRASE_ENV, raising=False)
    with pytest.raises(KeyFileError, match=rf"locked\.key is encrypted: set {PASSPHRASE_ENV}"):
        load_private(locked)
    monkeypatch.setenv(PASSPHRASE_ENV, "wrong")
    with pytest.raises(KeyFileError, match="wrong passphrase"):
        load_private(locked)
    monkeypatch.setenv(PASSPHRASE_ENV, "s3cret")
    assert key_id(load_private(locked).public_key()) == pair.key_id


@pytest.mark.parametrize("content", [b"", b"garbage", b"\x00" * 100,
                                     b"-----BEGIN PRIVATE KEY-----\nAAAA\n"])
def test_garbage_is_not_a_key(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.key"
    path.write_bytes(content)
    with pytest.raises(KeyFileError, match=r"bad\.key is not a PEM private key"):
        load_private(path)
    with pytest.raises(KeyFileError, match=r"bad\.key"):
        load_public(str(path))


def test_a_missing_or_huge_key_file(tmp_path: Path) -> None:
    with pytest.raises(KeyFileError, match=r"cannot read key file .*nope\.key"):
        load_private(tmp_path / "nope.key")
    (tmp_path / "big.key").write_bytes(b"x" * 70_000)
    with pytest.raises(KeyFileError, match=r"big\.key is not a key file"):
        load_private(tmp_path / "big.key")
