"""Ed25519 signing keys: generate, load, and name them.

Private keys are PKCS#8 PEM files created with mode 0600 (never printed, never logged); public
keys are SubjectPublicKeyInfo PEM. A key id is `ed25519:` + the 32-byte raw public key in
lowercase hex (the form mesh-llm uses for its release signer).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from meshcert.core.errors import ErrorKind, MeshcertError

KEY_ID = re.compile(r"^ed25519:([0-9a-f]{64})$")
PASSPHRASE_ENV = "MESHCERT_ATTEST_KEY_PASSPHRASE"
MAX_KEY_FILE_BYTES = 64 * 1024


class KeyFileError(MeshcertError, ValueError):
    """A key file that cannot be used for what it was given for (the message names it)."""

    kind = ErrorKind.USAGE


@dataclass(frozen=True)
class KeyPair:
    private_path: Path
    public_path: Path
    key_id: str


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + raw.hex()


def public_from_key_id(text: str) -> Ed25519PublicKey:
    match = KEY_ID.match(text.strip().lower())
    if match is None:
        raise KeyFileError(f"{text!r} is not a key id of the form ed25519:<64 hex>")
    return Ed25519PublicKey.from_public_bytes(bytes.fromhex(match.group(1)))


def generate(out: str | os.PathLike[str]) -> KeyPair:
    """Write OUT.key (PKCS#8 PEM, 0600, created exclusively) and OUT.pub (PEM)."""
    base = Path(out)
    private_path = base.with_name(base.name + ".key")
    public_path = base.with_name(base.name + ".pub")
    for path in (private_path, public_path):
        if path.exists():
            raise KeyFileError(f"{path} exists; refusing to overwrite a key")
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    try:
        fd = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(pem)
        os.chmod(private_path, 0o600)  # whatever the umask
        public_path.write_bytes(key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo))
    except OSError as exc:
        raise KeyFileError(f"cannot write {exc.filename or base}: {exc.strerror or exc}"
                           ) from None
    return KeyPair(private_path, public_path, key_id(key.public_key()))


def _read(path: str | os.PathLike[str]) -> bytes:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise KeyFileError(f"cannot read key file {os.fspath(path)}: {exc.strerror or exc}"
                           ) from None
    if len(data) > MAX_KEY_FILE_BYTES:
        raise KeyFileError(f"{os.fspath(path)} is not a key file (over 64 KiB)")
    return data


def _kind(key: object) -> str:
    from cryptography.hazmat.primitives.asymmetric import dsa, ec, rsa

    for kinds, name in (((rsa.RSAPrivateKey, rsa.RSAPublicKey), "an RSA key"),
                        ((ec.EllipticCurvePrivateKey, ec.EllipticCurvePublicKey), "an EC key"),
                        ((dsa.DSAPrivateKey, dsa.DSAPublicKey), "a DSA key")):
        if isinstance(key, kinds):
            return name
    return f"a {type(key).__name__} key"


def load_private(path: str | os.PathLike[str], passphrase: bytes | None = None
                 ) -> Ed25519PrivateKey:
    """The Ed25519 private key in `path` (PKCS#8 PEM); `passphrase` defaults to the
    MESHCERT_ATTEST_KEY_PASSPHRASE environment variable for an encrypted key."""
    name = os.fspath(path)
    data = _read(path)
    if passphrase is None and os.environ.get(PASSPHRASE_ENV):
        passphrase = os.environ[PASSPHRASE_ENV].encode()
    if b"PUBLIC KEY-----" in data and b"PRIVATE KEY-----" not in data:
        raise KeyFileError(f"{name} holds a public key; signing needs the private key "
                           "(the .key file `meshcert attest keygen` wrote)")
    try:
        key = serialization.load_pem_private_key(data, password=passphrase)
    except TypeError:
        if passphrase is None:
            raise KeyFileError(f"{name} is encrypted: set {PASSPHRASE_ENV} to its passphrase"
                               ) from None
        raise KeyFileError(f"{name} is not encrypted; unset {PASSPHRASE_ENV}") from None
    except (ValueError, UnsupportedAlgorithm):
        why = "a wrong passphrase or " if passphrase is not None else ""
        raise KeyFileError(f"{name} is not a PEM private key ({why}not PKCS#8 PEM)") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"{name} holds {_kind(key)}, not an Ed25519 key")
    return key


def load_private_spec(spec: str) -> Ed25519PrivateKey:
    """`--attest-key`: a key file, or `env:NAME` for the PEM in environment variable NAME (an
    HF Jobs secret inside a job; errors name the variable, never its value)."""
    if not spec.startswith("env:"):
        return load_private(spec)
    name = spec[len("env:"):]
    pem = os.environ.get(name)
    if not pem:
        raise KeyFileError(f"the environment variable {name} holding the key is not set")
    try:
        key = serialization.load_pem_private_key(pem.encode(), password=None)
    except (TypeError, ValueError, UnsupportedAlgorithm):
        raise KeyFileError(f"the environment variable {name} holds no unencrypted PKCS#8 PEM "
                           "private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise KeyFileError(f"the environment variable {name} holds {_kind(key)}, not an "
                           "Ed25519 key")
    return key


def load_public(spec: str) -> Ed25519PublicKey:
    """A trusted key from `ed25519:<hex>` or a PEM file (a public key, or a private key's
    public half is refused: trust is given by public keys only)."""
    if spec.strip().lower().startswith("ed25519:"):
        return public_from_key_id(spec)
    data = _read(spec)
    if b"PRIVATE KEY-----" in data:
        raise KeyFileError(f"{spec} holds a private key; give the public key (.pub) to trust")
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, UnsupportedAlgorithm):
        raise KeyFileError(f"{spec} is not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise KeyFileError(f"{spec} holds {_kind(key)}, not an Ed25519 key")
    return key
