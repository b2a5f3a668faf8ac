"""Helpers for the attestation tests: keys, a certified-and-signed package, and the ways to
tamper with an envelope (each refused with its own code)."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from meshcert.attest.dsse import Envelope, parse_lines, sign
from meshcert.attest.keys import KeyPair, generate, load_private
from meshcert.attest.sign import Signed, sign_report, write_attestation
from meshcert.attest.statement import canonical_json
from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions


def keypair(base: Path, name: str = "signer") -> KeyPair:
    base.mkdir(parents=True, exist_ok=True)
    return generate(base / name)


def certify(ref: str, **options: Any) -> CertReport:
    """Package-only, in process; hf:// with Hub-attested hashes (as the CLI does)."""
    if ref.startswith("hf://"):
        options.setdefault("verify_sha256", False)
    return certify_package(CertRequest(model=ref, options=CertOptions(**options)))


def certify_and_sign(ref: str, key: KeyPair, out: Path, **options: Any) -> Signed:
    """Certify `ref`, sign the report with `key`, write the .intoto.jsonl at `out`."""
    signed = sign_report(certify(ref, **options), load_private(key.private_path), str(out))
    assert not isinstance(signed, str), signed
    write_attestation(str(out), [signed.envelope])
    return signed


def only_envelope(path: Path) -> Envelope:
    parsed = parse_lines(path.read_bytes(), str(path))
    assert len(parsed.envelopes) == 1
    return parsed.envelopes[0]


def statement_of(path: Path) -> dict[str, Any]:
    return dict(json.loads(only_envelope(path).payload))


def write_statement(path: Path, statement: dict[str, Any], key: KeyPair | None) -> None:
    """Replace the statement: re-signed with `key`, or (None) keeping the old signature."""
    old = only_envelope(path)
    payload = canonical_json(statement)
    envelope = (sign(payload, load_private(key.private_path)) if key is not None
                else Envelope(old.payload_type, payload, old.signatures))
    write_attestation(str(path), [envelope])


def edit_statement(path: Path, edit: Callable[[dict[str, Any]], None],
                   key: KeyPair | None) -> None:
    statement = statement_of(path)
    edit(statement)
    write_statement(path, statement, key)


def flip_signature(path: Path) -> None:
    """One bit of the signature changed, the statement as signed."""
    line = json.loads(path.read_text())
    sig = bytearray(base64.b64decode(line["signatures"][0]["sig"]))
    sig[0] ^= 1
    line["signatures"][0]["sig"] = base64.b64encode(bytes(sig)).decode()
    path.write_text(json.dumps(line) + "\n")


def flip_last_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


def attest_on_hub(hub: Any, repo: str, root: Path, signer: KeyPair, work: Path) -> str:
    """Publish `root` as `repo`, certify that commit from the Hub, sign it, and commit the
    attestation on top (as `package publish --attest-key` does); the later commit's SHA."""
    from meshcert.attest.package_state import ATTESTATION_PATH

    certified = hub.publish_dir(repo, root)
    att = work / f"{repo.replace('/', '_')}.intoto.jsonl"
    certify_and_sign(f"hf://{repo}@{certified}", signer, att)
    return str(hub.commit(repo, {ATTESTATION_PATH: att.read_bytes()}, replace_all=False))
