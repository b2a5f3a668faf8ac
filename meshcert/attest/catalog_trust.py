"""The trust policy of a catalog run (meshcert.catalog.attested.AttestationPolicy):
attestation findings for each fully certified package, and with --trust-attested, packages
accepted from a valid trusted PASSED attestation without reading any header."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from meshcert.attest.package_state import ATTESTATION_PATH, hub_state
from meshcert.attest.policy_check import verify_view
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import verify_file, with_mode
from meshcert.catalog.attested import AttestedCheck
from meshcert.core.findings import Finding

if TYPE_CHECKING:
    from meshcert.attest.package_state import PackageState
    from meshcert.attest.verify import Verification
    from meshcert.certify.view import PackageView
    from meshcert.core.hub.gate import RequestGate


class CatalogTrust:
    def __init__(self, policy: TrustPolicy, *, trust_attested: bool = False,
                 attestation_repo: str | None = None) -> None:
        self.policy = policy
        self.trust_attested = trust_attested
        # a dataset holding <ns>/<repo>/<commit>.intoto.jsonl (meshcert serve's uploads),
        # read instead of the package's own attestations/meshcert.intoto.jsonl
        self.attestation_repo = attestation_repo
        self._signers: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()

    def findings(self, view: PackageView) -> list[Finding]:
        if self.policy.mode == "off":
            return []
        verdict = verify_view(view, self.policy)
        if verdict.valid and verdict.signer and view.ref.repo and view.ref.resolved_commit:
            with self._lock:
                self._signers[(view.ref.repo.lower(), view.ref.resolved_commit)] = \
                    verdict.signer
        return with_mode(verdict.findings, self.policy.mode)

    def signer_of(self, repo: str, commit: str) -> str | None:
        with self._lock:
            return self._signers.get((repo.lower(), commit.lower()))

    def accept(self, repo: str, revision: str | None, gate: RequestGate
               ) -> AttestedCheck | None:
        if not self.trust_attested:
            return None
        if self.attestation_repo is not None:
            return self._accept_from_repo(repo, revision, gate, self.attestation_repo)
        state = hub_state(repo, revision, read_attestation=True, gate=gate)
        if state.attestation is None:
            return AttestedCheck(accepted=False, requests=state.requests)
        name = f"hf://{repo}@{state.commit}/{ATTESTATION_PATH}"
        verdict = verify_file(state.attestation, name, state, self.policy)
        if not verdict.valid:
            return AttestedCheck(accepted=False, requests=state.requests)
        return self._accepted(verdict, state, state.requests)

    def _accept_from_repo(self, repo: str, revision: str | None, gate: RequestGate,
                          dataset: str) -> AttestedCheck:
        """As `accept`, the attestation read from the attestation repo at the commit
        `revision` resolves to (two requests more: the commit, then the file's listing)."""
        from meshcert.attest.attestation_repo import attestation_path, read_attestation
        from meshcert.core.hub.api import HubApi
        from meshcert.core.hub.errors import HubError
        from meshcert.core.hub.settings import HubSettings

        try:
            commit = HubApi(HubSettings.from_env(), gate=gate).resolve(
                repo, revision, listing=False).commit
            data = read_attestation(dataset, repo, commit)
        except HubError:
            return AttestedCheck(accepted=False, requests=1)
        if data is None:
            return AttestedCheck(accepted=False, requests=2)
        state = hub_state(repo, commit, read_attestation=False, gate=gate, attestation=data)
        verdict = verify_file(data, f"hf://datasets/{dataset}/{attestation_path(repo, commit)}",
                              state, self.policy)
        if not verdict.valid:
            return AttestedCheck(accepted=False, requests=state.requests + 3)
        return self._accepted(verdict, state, state.requests + 3)

    @staticmethod
    def _accepted(verdict: Verification, state: PackageState, requests: int) -> AttestedCheck:
        warnings = verdict.statement.report.get("warnings") if verdict.statement else None
        return AttestedCheck(
            accepted=True, requests=requests, commit=state.commit, signer=verdict.signer,
            manifest_raw=state.manifest_raw,
            warning_codes=tuple(str(w) for w in warnings) if isinstance(warnings, list) else ())
