"""The trust policy (`--trust trust.toml`): whose attestations count, for which repos, and
what a missing or bad one means (mode off | warn | enforce).

    mode = "enforce"
    [[signer]]
    key = "ed25519:<64 hex>"            # or: pem = "keys/release.pub" (relative to the file)
    repos = ["meshllm/*"]
    [[signer]]
    oidc_issuer = "https://token.actions.githubusercontent.com"
    subject = "https://github.com/Mesh-LLM/catalog/.github/workflows/*@refs/heads/main"
    repos = ["meshllm/*"]

A signer counts only for the repos its glob patterns match (`*` for all, local packages
included); a package with no repo (local, no hf:// resource) matches only `*`.
"""

from __future__ import annotations

import fnmatch
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from meshcert.attest.keys import KeyFileError, key_id, load_public
from meshcert.core.errors import ErrorKind, MeshcertError

Mode = Literal["off", "warn", "enforce"]
MODES: tuple[Mode, ...] = ("off", "warn", "enforce")
MAX_TRUST_FILE_BYTES = 1024 * 1024


class TrustFileError(MeshcertError, ValueError):
    """A trust file that cannot be used (the message names the file and the entry)."""

    kind = ErrorKind.USAGE


@dataclass(frozen=True)
class KeySigner:
    key: Ed25519PublicKey
    repos: tuple[str, ...]

    @property
    def key_id(self) -> str:
        return key_id(self.key)

    @property
    def name(self) -> str:
        return self.key_id


@dataclass(frozen=True)
class IdentitySigner:
    """A CI identity (keyless Sigstore): the certificate's OIDC issuer and a subject glob."""

    oidc_issuer: str
    subject: str
    repos: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.subject} ({self.oidc_issuer})"

    def matches(self, issuer: str, subject: str) -> bool:
        return issuer == self.oidc_issuer and fnmatch.fnmatchcase(subject, self.subject)


@dataclass
class TrustPolicy:
    mode: Mode = "off"
    keys: list[KeySigner] = field(default_factory=list)
    identities: list[IdentitySigner] = field(default_factory=list)
    source: str | None = None  # the trust file, when read from one
    sigstore_roots: list[str] = field(default_factory=list)  # PEM CA files (keyless, offline)

    @classmethod
    def of_keys(cls, keys: list[Ed25519PublicKey], mode: Mode = "enforce") -> TrustPolicy:
        """--trusted-key PUB...: these keys, for every repo."""
        return cls(mode=mode, keys=[KeySigner(k, ("*",)) for k in keys])

    def keys_for(self, repo: str | None) -> list[Ed25519PublicKey]:
        return [s.key for s in self.keys if repo_matches(s.repos, repo)]

    def identities_for(self, repo: str | None) -> list[IdentitySigner]:
        return [s for s in self.identities if repo_matches(s.repos, repo)]

    def all_keys(self) -> list[Ed25519PublicKey]:
        return [s.key for s in self.keys]


def repo_matches(patterns: tuple[str, ...], repo: str | None) -> bool:
    if repo is None:
        return "*" in patterns
    return any(fnmatch.fnmatchcase(repo.lower(), p.lower()) for p in patterns)


def _repos(value: object, where: str) -> tuple[str, ...]:
    if value is None:
        return ("*",)
    if not isinstance(value, list) or not value or not all(
            isinstance(v, str) and v.strip() for v in value):
        raise TrustFileError(f"{where}.repos must be a non-empty list of ns/repo globs")
    return tuple(value)


def load_trust(path: str | os.PathLike[str]) -> TrustPolicy:
    name = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_TRUST_FILE_BYTES + 1)
    except OSError as exc:
        raise TrustFileError(f"cannot read trust file {name}: {exc.strerror or exc}") from None
    if len(raw) > MAX_TRUST_FILE_BYTES:
        raise TrustFileError(f"{name} is over 1 MiB; not a trust file")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise TrustFileError(f"{name} is not TOML: {exc}") from None
    mode = data.get("mode", "off")
    if mode not in MODES:
        raise TrustFileError(f"{name}: mode must be one of off, warn, enforce (got {mode!r})")
    policy = TrustPolicy(mode=mode, source=name)
    base = Path(name).parent
    signers = data.get("signer", [])
    if not isinstance(signers, list):
        raise TrustFileError(f"{name}: signer must be an array of tables ([[signer]])")
    for i, item in enumerate(signers):
        where = f"{name}: signer[{i}]"
        if not isinstance(item, dict):
            raise TrustFileError(f"{where} is not a table")
        repos = _repos(item.get("repos"), where)
        if "key" in item or "pem" in item:
            spec = item.get("key") if "key" in item else item.get("pem")
            if not isinstance(spec, str):
                raise TrustFileError(f"{where}: key/pem must be a string")
            if "pem" in item and not os.path.isabs(spec):
                spec = str(base / spec)
            try:
                policy.keys.append(KeySigner(load_public(spec), repos))
            except KeyFileError as exc:
                raise TrustFileError(f"{where}: {exc}") from None
        elif "oidc_issuer" in item or "subject" in item:
            issuer, subject = item.get("oidc_issuer"), item.get("subject")
            if not isinstance(issuer, str) or not isinstance(subject, str) or not subject:
                raise TrustFileError(f"{where}: a CI identity needs oidc_issuer and subject")
            policy.identities.append(IdentitySigner(issuer, subject, repos))
        else:
            raise TrustFileError(f"{where} names no key, pem, or oidc_issuer + subject")
    roots = data.get("sigstore_roots", [])
    if not isinstance(roots, list) or not all(isinstance(r, str) for r in roots):
        raise TrustFileError(f"{name}: sigstore_roots must be a list of PEM file paths")
    policy.sigstore_roots = [r if os.path.isabs(r) else str(base / r) for r in roots]
    return policy
