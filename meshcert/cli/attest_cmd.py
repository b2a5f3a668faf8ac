"""`meshcert attest keygen` and `meshcert attest verify`: signed certifications
(docs/attestation.md)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from meshcert.cli.exit_codes import Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.shared_options import json_option

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.attest.trust import TrustPolicy
    from meshcert.attest.verify import Verification

app = typer.Typer(help="Signed certifications: make a signing key, verify an attestation.",
                  no_args_is_help=True, rich_markup_mode=None)


@app.command("keygen")
def keygen(
    out: Annotated[str, typer.Option("--out", metavar="NAME", help="Write NAME.key (PKCS#8 "
                                     "PEM, mode 0600) and NAME.pub (PEM).")],
) -> None:
    """Make an Ed25519 signing key; print its key id (never the key)."""
    from meshcert.attest.keys import generate

    pair = generate(out)
    typer.echo(f"private key: {pair.private_path} (keep it secret; never share it)")
    typer.echo(f"public key: {pair.public_path}")
    typer.echo(pair.key_id)


def load_signing_key(path: str, flag: str = "--attest-key") -> Ed25519PrivateKey:
    """The private key for --attest-key, or a usage error naming the file."""
    from meshcert.attest.keys import KeyFileError, load_private_spec

    with option_errors(flag, also=(KeyFileError,)):
        return load_private_spec(path)


def load_policy(trust: str | None, trusted_keys: list[str] | None) -> TrustPolicy:
    """--trust FILE or --trusted-key PUB... (exactly one) as a policy."""
    from meshcert.attest.keys import KeyFileError, load_public
    from meshcert.attest.requests import check_trust_options
    from meshcert.attest.trust import TrustFileError, TrustPolicy, load_trust

    with option_errors():
        check_trust_options(trust, trusted_keys)
    if trust is not None:
        with option_errors("--trust", also=(TrustFileError,)):
            return load_trust(trust)
    with option_errors("--trusted-key", also=(KeyFileError,)):
        return TrustPolicy.of_keys([load_public(k) for k in trusted_keys or []])


def load_trust_option(trust: str | None) -> TrustPolicy | None:
    """--trust FILE on the certify commands (None when not given)."""
    if trust is None:
        return None
    return load_policy(trust, None)


@app.command("verify")
def verify(
    package: Annotated[str, typer.Argument(metavar="PKG",
                                           help="A local package dir or hf://ns/repo@rev.")],
    attestation: Annotated[str | None, typer.Option(
        "--attestation", metavar="FILE", help="The .intoto.jsonl file (default: "
        "attestations/meshcert.intoto.jsonl in the package; for a local one, else "
        "cert.intoto.jsonl in the working directory).")] = None,
    trusted_key: Annotated[list[str] | None, typer.Option(
        "--trusted-key", metavar="PUB", help="A trusted public key (PEM file or "
        "ed25519:<hex>), for every repo; repeatable.")] = None,
    trust: Annotated[str | None, typer.Option(
        "--trust", metavar="FILE", help="A trust policy (trust.toml).")] = None,
    json_out: Annotated[bool, json_option("Print the verdict as JSON.")] = False,
    attestation_repo: Annotated[str | None, typer.Option(
        "--attestation-repo", metavar="DATASET", help="Read the attestation of hf://PKG from "
        "this dataset, at <ns>/<repo>/<commit>.intoto.jsonl (where `meshcert serve` uploads "
        "it).")] = None,
) -> None:
    """Verify a signed certification against the package as it is now; exit 0 valid and
    trusted, 1 not, 2 usage error."""
    from meshcert.attest.requests import VerifyRequest
    from meshcert.attest.verify import verify_ref

    with option_errors():
        request = VerifyRequest(package, attestation, trust,
                                tuple(trusted_key or ()), attestation_repo)
    policy = load_policy(request.trust, list(request.trusted_keys))
    verdict = verify_ref(request.package, request.attestation, policy, request.attestation_repo)
    if json_out:
        from meshcert.cli.pipe import write_or_drop

        write_or_drop(sys.stdout, json.dumps(verdict_json(package, verdict), indent=2) + "\n")
    else:
        for line in verdict_lines(package, verdict):
            typer.echo(line)
    raise typer.Exit(Exit.PASSED if verdict.valid else Exit.FAILED)


def verdict_json(package: str, verdict: Verification) -> dict[str, object]:
    return {"package": package, "attestation": verdict.attestation, "valid": verdict.valid,
            "signer": verdict.signer, "result": verdict.result, "subjects": verdict.subjects,
            "findings": [f.model_dump() for f in verdict.findings]}


def verdict_lines(package: str, verdict: Verification) -> list[str]:
    if verdict.valid:
        head = (f"VALID: {package}: {verdict.result} by {verdict.signer}, {verdict.subjects} "
                "subject(s) match")
    else:
        head = f"INVALID: {package}: {verdict.attestation}"
    lines = [head]
    for f in verdict.findings:
        lines.append(f"  {f.severity} {f.code}: {f.message}")
        if f.severity != "info":
            lines.append(f"    fix: {f.remediation}")
    return lines
