"""The trust policy applied during a certification (`--trust trust.toml` on `models certify`
and `catalog certify`): the package's attestation is verified against the facts the run
gathered (the bytes it hashed, or the Hub listing's LFS SHA-256), and a missing or bad one is
a warning (`warn`) or an error (`enforce`)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from meshcert.attest.package_state import ATTESTATION_PATH, PackageState
from meshcert.attest.statement import MANIFEST_NAME
from meshcert.attest.trust import TrustPolicy
from meshcert.attest.verify import Verification, verify_file, with_mode
from meshcert.core.findings import Finding

if TYPE_CHECKING:
    from meshcert.certify.view import PackageView


def state_from_view(view: PackageView) -> PackageState:
    """The package as the certification saw it (no byte read again)."""
    hf = view.ref.kind == "hf"
    state = PackageState(ref=view.display_ref, repo=view.ref.repo if hf else None,
                         commit=view.ref.resolved_commit if hf else None)
    if view.manifest_raw is not None:
        state.digests[MANIFEST_NAME] = hashlib.sha256(view.manifest_raw).hexdigest()
    state.declared = list(dict.fromkeys(e.path for e in view.artifacts()
                                        if isinstance(e.path, str)))
    for path in state.declared:
        fact = view.files.get(path)
        digest = (fact.sha256 or fact.lfs_sha256) if fact is not None else None
        if digest is not None:
            state.digests[path] = digest
        else:
            state.absent[path] = "no verified digest" if fact is not None else "no such file"
    return state


def _attestation_of(view: PackageView, given: str | None) -> tuple[bytes | None, str]:
    from meshcert.attest.verify import read_local_attestation

    if given is not None:
        return read_local_attestation(given), given
    if view.ref.kind == "hf" and view.local_dir is None:
        return _hub_attestation(view)
    root = view.local_dir or view.display_ref
    name = os.path.join(root, *ATTESTATION_PATH.split("/"))
    return read_local_attestation(name), name


def _hub_attestation(view: PackageView) -> tuple[bytes | None, str]:
    from meshcert.attest.dsse import MAX_FILE_BYTES
    from meshcert.core.hub.files import HubFiles
    from meshcert.core.hub.settings import HubSettings
    from meshcert.core.hub.stats import TransferCounter
    from meshcert.core.hub.token import token_redactor

    repo, commit = view.ref.repo or "", view.ref.resolved_commit or ""
    name = f"hf://{repo}@{commit}/{ATTESTATION_PATH}"
    if view.listing is not None and ATTESTATION_PATH not in view.listing:
        return None, name
    counter = TransferCounter()
    files = HubFiles(HubSettings.from_env(), repo=repo, commit=commit, counter=counter,
                     redact=token_redactor())
    try:
        return files.read_all(ATTESTATION_PATH, MAX_FILE_BYTES), name
    finally:
        files.close()
        for key, value in counter.as_dict().items():  # the run's transfer counts include it
            view.transfer[key] = view.transfer.get(key, 0) + value


def trust_gate(policy: TrustPolicy, attestation: str | None = None
               ) -> Callable[[PackageView], list[Finding]]:
    """The findings the policy adds to a certification (none in mode `off`)."""

    def check(view: PackageView) -> list[Finding]:
        if policy.mode == "off":
            return []
        verdict = verify_view(view, policy, attestation)
        return with_mode(verdict.findings, policy.mode)

    return check


def verify_view(view: PackageView, policy: TrustPolicy, attestation: str | None = None
                ) -> Verification:
    from meshcert.attest.codes import MISSING
    from meshcert.core.findings import finding
    from meshcert.core.hub.errors import HubError
    from meshcert.core.usage import OptionError

    try:
        data, name = _attestation_of(view, attestation)
    except HubError as err:
        return Verification(attestation=ATTESTATION_PATH, findings=[err.to_finding()])
    except OptionError as exc:
        return Verification(attestation=attestation or ATTESTATION_PATH,
                            findings=[finding(MISSING, str(exc))])
    return verify_file(data, name, state_from_view(view), policy)
