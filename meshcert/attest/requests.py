"""What the signing and verifying options ask, and the rules they follow: pure functions of
the option values that raise `OptionError` (meshcert.core.usage) naming the option at fault,
tested without the CLI."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from meshcert.core.usage import OptionError


def attestation_path(report_out: str | None, attestation_out: str | None) -> str:
    """Where --attest-key's attestation goes: --attestation-out, else beside --report-out."""
    from meshcert.attest.sign import default_attestation_path

    if attestation_out is not None:
        return attestation_out
    if report_out is None:
        raise OptionError("needs --report-out (the attestation goes beside it) or "
                          "--attestation-out PATH", "--attest-key")
    return default_attestation_path(report_out)


def check_attestation_out(attest_key: str | None, attestation_out: str | None) -> None:
    """--attestation-out only says where a signature goes: it needs --attest-key."""
    if attest_key is None and attestation_out is not None:
        raise OptionError("needs --attest-key", "--attestation-out")


def check_trust_options(trust: str | None, trusted_keys: Sequence[str] | None) -> None:
    """Whose attestations count: --trust FILE or --trusted-key PUB..., exactly one of them."""
    if (trust is None) == (not trusted_keys):
        raise OptionError("give --trusted-key PUB... or --trust FILE (one of them)",
                          "--trusted-key / --trust")


@dataclass(frozen=True)
class VerifyRequest:
    """`attest verify`: the package, its attestation file (None: the one inside it), and the
    trust (a trust.toml, or keys trusted for every repo)."""

    package: str
    attestation: str | None = None
    trust: str | None = None
    trusted_keys: tuple[str, ...] = ()
    attestation_repo: str | None = None  # a dataset holding <ns>/<repo>/<commit>.intoto.jsonl

    def __post_init__(self) -> None:
        check_trust_options(self.trust, self.trusted_keys)
        if self.attestation_repo is None:
            return
        from meshcert.attest.attestation_repo import valid_repo

        if self.attestation is not None:
            raise OptionError("give --attestation FILE or --attestation-repo DATASET, not both",
                              option="--attestation-repo")
        if not self.package.startswith("hf://"):
            raise OptionError("--attestation-repo is for a package on the Hub "
                              "(hf://ns/repo[@rev])", option="--attestation-repo")
        if not valid_repo(self.attestation_repo):
            raise OptionError(f"{self.attestation_repo!r} is not a dataset id (ns/name)",
                              option="--attestation-repo")
