"""Who may do what on the fake Hub: a token table (token -> user, orgs, role or per-namespace
scopes) and the `/api/whoami-v2` answer built from it.

The rules follow the Hub's: a "read" token reads what its user may read and writes nothing; a
"write" token writes to its user's namespace and to the orgs where the user's role is write or
admin; a fine-grained token may only touch the namespaces it lists, each read or write. Anyone
may read a public repo; a private repo is readable only from its namespace. Opening a pull
request needs read access only (that is what community contributions are).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["read", "write", "fineGrained"]
OrgRole = Literal["read", "contributor", "write", "admin"]
WRITE_ORG_ROLES = frozenset({"write", "admin"})


def _object_id(name: str) -> str:
    return hashlib.md5(name.encode()).hexdigest()[:24]


@dataclass(frozen=True)
class HubToken:
    value: str
    user: str
    orgs: Mapping[str, OrgRole] = field(default_factory=dict)
    role: Role = "write"
    scopes: Mapping[str, Literal["read", "write"]] = field(default_factory=dict)  # fineGrained

    def member_of(self, namespace: str) -> bool:
        return namespace == self.user or namespace in self.orgs

    def may_read(self, namespace: str) -> bool:
        if self.role == "fineGrained":
            return namespace in self.scopes and self.member_of(namespace)
        return self.member_of(namespace)

    def may_write(self, namespace: str) -> bool:
        if self.role == "read":
            return False
        own = namespace == self.user or self.orgs.get(namespace) in WRITE_ORG_ROLES
        if self.role == "fineGrained":
            return own and self.scopes.get(namespace) == "write"
        return own

    def whoami(self) -> dict[str, Any]:
        """The fields the client and the `hf` CLI read (name, orgs[].name, auth.accessToken)."""
        access: dict[str, Any] = {"displayName": f"{self.user}-token", "role": self.role}
        if self.role == "fineGrained":
            access["fineGrained"] = {"canReadGatedRepos": False, "scoped": [
                {"entity": {"type": "user" if ns == self.user else "org", "name": ns},
                 "permissions": ["repo.content.read"] + (
                     ["repo.write"] if perm == "write" else [])}
                for ns, perm in sorted(self.scopes.items())]}
        return {
            "type": "user", "id": _object_id(self.user), "name": self.user,
            "fullname": self.user, "isPro": False, "canPay": True,
            "orgs": [{"type": "org", "id": _object_id(org), "name": org, "fullname": org,
                      "roleInOrg": role} for org, role in sorted(self.orgs.items())],
            "auth": {"type": "access_token", "accessToken": access},
        }


class TokenTable:
    """Tokens by value; `caller(authorization header)` -> (token or None, sent an unknown one)."""

    def __init__(self) -> None:
        self._tokens: dict[str, HubToken] = {}

    def add(self, token: HubToken) -> HubToken:
        self._tokens[token.value] = token
        return token

    def get(self, value: str | None) -> HubToken | None:
        return self._tokens.get(value) if value else None

    @staticmethod
    def bearer(authorization: str | None) -> str | None:
        if not authorization or not authorization.startswith("Bearer "):
            return None
        return authorization[len("Bearer "):].strip() or None

    def __len__(self) -> int:
        return len(self._tokens)

    def all(self) -> list[HubToken]:
        return list(self._tokens.values())
