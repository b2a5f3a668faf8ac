"""`meshcert attest keygen|verify` and `--attest-key` / `--trust` on the certify commands, as
users run them: exit statuses, the files written, what the console says."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from meshcert.attest import codes
from meshcert.cli import app
from tests.conftest import PackageFactory
from tests.support.attestations import attest_on_hub, flip_last_byte
from tests.support.catalog_packages import PackageShelf, package_ref, variant, write_entry
from tests.support.hub_fixture import hub  # noqa: F401
from tests.support.hub_server import FakeHub

runner = CliRunner()


def run(*args: str) -> Result:
    return runner.invoke(app, list(args))


@pytest.fixture
def key(tmp_path: Path) -> Path:
    result = run("attest", "keygen", "--out", str(tmp_path / "release"))
    assert result.exit_code == 0, result.output
    return tmp_path / "release"


def sign(root: Path, key: Path, out: Path, *more: str) -> Result:
    return run("models", "certify", str(root), "--package-only", "--report-out", str(out),
               "--attest-key", f"{key}.key", *more)


def test_keygen_prints_the_key_id_and_never_the_key(key: Path) -> None:
    private = Path(f"{key}.key")
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    result = run("attest", "keygen", "--out", str(key.parent / "second"))
    assert result.exit_code == 0
    last = result.output.strip().splitlines()[-1]
    assert last.startswith("ed25519:") and len(last) == len("ed25519:") + 64
    body = Path(f"{key.parent / 'second'}.key").read_text().splitlines()[1]
    assert body not in result.output and "PRIVATE KEY" not in result.output


def test_keygen_refuses_to_overwrite(key: Path) -> None:
    result = run("attest", "keygen", "--out", str(key))
    assert result.exit_code == 2 and "exists" in result.output


def test_certify_signs_beside_the_report_and_verify_accepts_it(
        packages: PackageFactory, key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    out = tmp_path / "reports" / "cert.json"
    result = sign(root, key, out)
    assert result.exit_code == 0, result.output
    att = tmp_path / "reports" / "cert.intoto.jsonl"
    assert att.is_file()
    report = json.loads(out.read_text())
    assert report["attestation"]["result"] == "PASSED"
    assert report["attestation"]["file"] == str(att)
    assert f"attestation: {att}: PASSED, signer ed25519:" in result.output
    verified = run("attest", "verify", str(root), "--attestation", str(att),
                   "--trusted-key", f"{key}.pub")
    assert verified.exit_code == 0, verified.output
    assert verified.output.startswith(f"VALID: {root}: PASSED by {report['attestation']['signer']}")
    as_json = run("attest", "verify", str(root), "--attestation", str(att), "--trusted-key",
                  report["attestation"]["signer"], "--json")
    assert as_json.exit_code == 0
    data = json.loads(as_json.output)
    assert data["valid"] is True and data["subjects"] == report["attestation"]["subjects"]


def test_verify_refuses_a_changed_artifact_with_exit_1(packages: PackageFactory, key: Path,
                                                       tmp_path: Path) -> None:
    root = packages.build("llama").root
    assert sign(root, key, tmp_path / "cert.json").exit_code == 0
    flip_last_byte(sorted((root / "layers").glob("*.gguf"))[0])
    result = run("attest", "verify", str(root), "--attestation",
                 str(tmp_path / "cert.intoto.jsonl"), "--trusted-key", f"{key}.pub", "--json")
    assert result.exit_code == 1
    assert [f["code"] for f in json.loads(result.output)["findings"]] == [
        codes.SUBJECT_MISMATCH]


@pytest.mark.parametrize("content", [b'{"payloadType": "applic', b"not json\n",
                                     b"\x00" * (10 * 1024 * 1024)],
                         ids=["truncated", "non-json", "10MB"])
def test_a_bad_attestation_file_is_a_finding_naming_it(packages: PackageFactory, key: Path,
                                                       tmp_path: Path, content: bytes) -> None:
    root = packages.build("llama").root
    bad = tmp_path / "bad.intoto.jsonl"
    bad.write_bytes(content)
    result = run("attest", "verify", str(root), "--attestation", str(bad), "--trusted-key",
                 f"{key}.pub")
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert f"error {codes.MALFORMED}: {bad}" in result.output


def test_verify_usage_errors_exit_2(packages: PackageFactory, key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    neither = run("attest", "verify", str(root))
    assert neither.exit_code == 2 and "--trusted-key PUB... or --trust FILE" in neither.output
    private = run("attest", "verify", str(root), "--trusted-key", f"{key}.key")
    assert private.exit_code == 2 and "holds a private key" in private.output
    nowhere = run("attest", "verify", str(tmp_path / "nope"), "--trusted-key", f"{key}.pub")
    assert nowhere.exit_code == 2 and "not a package directory" in nowhere.output
    trust = tmp_path / "trust.toml"
    trust.write_text('mode = "sometimes"')
    bad_trust = run("attest", "verify", str(root), "--trust", str(trust))
    assert bad_trust.exit_code == 2 and "mode must be one of" in bad_trust.output


def test_a_public_or_foreign_key_given_to_sign_is_a_usage_error(
        packages: PackageFactory, key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    public = run("models", "certify", str(root), "--package-only", "--report-out",
                 str(tmp_path / "c.json"), "--attest-key", f"{key}.pub")
    assert public.exit_code == 2 and "release.pub holds a public key" in public.output
    junk = tmp_path / "junk.key"
    junk.write_text("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n")
    bad = run("models", "certify", str(root), "--package-only", "--report-out",
              str(tmp_path / "c.json"), "--attest-key", str(junk))
    assert bad.exit_code == 2 and "junk.key" in bad.output and "Traceback" not in bad.output
    assert not (tmp_path / "c.json").exists()  # refused before any work


def test_signing_needs_somewhere_to_write(packages: PackageFactory, key: Path) -> None:
    root = packages.build("llama").root
    result = run("models", "certify", str(root), "--package-only", "--attest-key",
                 f"{key}.key")
    assert result.exit_code == 2 and "--attestation-out" in result.output


def test_a_slice_is_never_signed_and_the_console_says_why(packages: PackageFactory,
                                                          key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    result = sign(root, key, tmp_path / "slice.json", "--layers", "0..2")
    assert result.exit_code == 0
    assert "attestation: none made: it certified a slice (--layers/--stage)" in result.output
    assert not (tmp_path / "slice.intoto.jsonl").exists()
    assert json.loads((tmp_path / "slice.json").read_text())["attestation"] is None


def test_unverified_digests_are_never_signed(packages: PackageFactory, key: Path,
                                             tmp_path: Path) -> None:
    root = packages.build("llama").root
    result = sign(root, key, tmp_path / "c.json", "--no-verify-sha256")
    assert "attestation: none made: artifact digests were not verified" in result.output
    assert not (tmp_path / "c.intoto.jsonl").exists()


def test_a_failed_certification_is_signed_failed(packages: PackageFactory, key: Path,
                                                 tmp_path: Path) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m.update(format="nope"))
    result = sign(info.root, key, tmp_path / "c.json", "--attestation-out",
                  str(tmp_path / "x" / "failed.jsonl"))
    assert result.exit_code == 1
    assert "attestation: " + str(tmp_path / "x" / "failed.jsonl") + ": FAILED" in result.output
    verify = run("attest", "verify", str(info.root), "--attestation",
                 str(tmp_path / "x" / "failed.jsonl"), "--trusted-key", f"{key}.pub")
    assert verify.exit_code == 1 and codes.NOT_PASSED in verify.output


def trust_file(tmp_path: Path, key: Path, mode: str) -> Path:
    path = tmp_path / f"trust-{mode}.toml"
    path.write_text(f'mode = "{mode}"\n[[signer]]\npem = "{key.name}.pub"\nrepos = ["*"]\n')
    return path


def test_trust_enforce_fails_an_unattested_package_and_warn_passes_it(
        packages: PackageFactory, key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    enforce = run("models", "certify", str(root), "--package-only", "--json", "--trust",
                  str(trust_file(tmp_path, key, "enforce")))
    assert enforce.exit_code == 1
    found = [(f["code"], f["severity"]) for f in json.loads(enforce.output)["findings"]]
    assert (codes.MISSING, "error") in found
    warn = run("models", "certify", str(root), "--package-only", "--json", "--trust",
               str(trust_file(tmp_path, key, "warn")))
    assert warn.exit_code == 0
    found = [(f["code"], f["severity"]) for f in json.loads(warn.output)["findings"]]
    assert (codes.MISSING, "warning") in found


def test_trust_enforce_passes_a_package_with_its_attestation(
        packages: PackageFactory, key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    assert sign(root, key, tmp_path / "c.json").exit_code == 0
    result = run("models", "certify", str(root), "--package-only", "--trust",
                 str(trust_file(tmp_path, key, "enforce")), "--attestation",
                 str(tmp_path / "c.intoto.jsonl"))
    assert result.exit_code == 0, result.output


def test_report_merge_signs_a_merge_covering_everything(packages: PackageFactory, key: Path,
                                                        tmp_path: Path) -> None:
    root = packages.build("llama").root
    slices = []
    for i in range(2):
        out = tmp_path / f"slice-{i}.json"
        result = run("models", "certify", str(root), "--package-only", "--stage", f"{i}/2",
                     "--report-out", str(out))
        assert result.exit_code == 0, result.output
        slices.append(str(out))
    partial = run("report", "merge", slices[0], "--report-out", str(tmp_path / "half.json"),
                  "--attest-key", f"{key}.key")
    assert "attestation: none made" in partial.output
    assert not (tmp_path / "half.intoto.jsonl").exists()
    merged = run("report", "merge", *slices, "--report-out", str(tmp_path / "merged.json"),
                 "--attest-key", f"{key}.key")
    assert merged.exit_code == 0, merged.output
    assert json.loads((tmp_path / "merged.json").read_text())["attestation"]["result"] == \
        "PASSED"
    verify = run("attest", "verify", str(root), "--attestation",
                 str(tmp_path / "merged.intoto.jsonl"), "--trusted-key", f"{key}.pub")
    assert verify.exit_code == 0, verify.output


def test_the_private_key_appears_in_no_report_and_no_output(packages: PackageFactory,
                                                             key: Path, tmp_path: Path) -> None:
    root = packages.build("llama").root
    out = tmp_path / "cert.json"
    result = sign(root, key, out, "--html", str(tmp_path / "c.html"), "--md",
                  str(tmp_path / "c.md"), "--junit", str(tmp_path / "c.xml"), "--sarif",
                  str(tmp_path / "c.sarif"))
    assert result.exit_code == 0
    secret = Path(f"{key}.key").read_text()
    body = "".join(secret.splitlines()[1:-1])
    from meshcert.attest.keys import load_private

    raw = load_private(Path(f"{key}.key")).private_bytes_raw()
    written = [result.output] + [p.read_text() for p in tmp_path.iterdir()
                                 if p.is_file() and p.suffix != ".key"]
    for text in written:
        assert body not in text and "PRIVATE KEY" not in text
        assert raw.hex() not in text and raw.hex().upper() not in text


def test_catalog_certify_trust_attested_says_so_per_package(
        hub: FakeHub, key: Path, tmp_path: Path) -> None:  # noqa: F811
    from meshcert.attest.keys import KeyPair, key_id, load_public

    shelf = PackageShelf(tmp_path / "packages")
    signer = KeyPair(Path(f"{key}.key"), Path(f"{key}.pub"), key_id(load_public(f"{key}.pub")))
    sha = attest_on_hub(hub, "ns/signed", shelf.v2("s"), signer, tmp_path)
    root = tmp_path / "catalog"
    write_entry(root, "meshcert/tiny-llama", {"A": variant(package_ref("ns/signed",
                                                                       revision=sha))})
    trust = trust_file(tmp_path, key, "enforce")
    result = run("catalog", "certify", str(root), "--trust", str(trust), "--trust-attested",
                 "--report-out", str(tmp_path / "catalog.json"))
    assert result.exit_code == 0, result.output
    assert f"hf://ns/signed@{sha[:12]}: verified by attestation, signer {signer.key_id}" in \
        result.output
    row = json.loads((tmp_path / "catalog.json").read_text())["packages"][0]
    assert row["attested"] == signer.key_id and row["attested_only"] is True
    assert row["requests"] == 3


def test_trust_attested_needs_trust(tmp_path: Path) -> None:
    result = run("catalog", "certify", str(tmp_path), "--trust-attested")
    assert result.exit_code == 2 and "needs --trust FILE" in result.output


def test_attestation_flags_that_need_another(packages: PackageFactory, tmp_path: Path) -> None:
    root = packages.build("llama").root
    out = run("models", "certify", str(root), "--package-only", "--attestation-out",
              str(tmp_path / "a.jsonl"))
    assert out.exit_code == 2 and "needs --attest-key" in out.output
    only = run("models", "certify", str(root), "--package-only", "--attestation",
               str(tmp_path / "a.jsonl"))
    assert only.exit_code == 2 and "needs --trust" in only.output
    hf_job = run("models", "certify", "hf://ns/pkg@" + "a" * 40, "--package-only", "--hf-job",
                 "--stages", "2", "--trust", str(tmp_path / "trust.toml"))
    assert hf_job.exit_code == 2 and "--trust cannot be combined with --hf-job" in hf_job.output


# --- where `attest verify DIR` finds a local package's attestation ---------------------------

def test_verify_finds_what_certify_wrote_beside_the_default_report(
        packages: PackageFactory, key: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    import shlex

    root = packages.build("llama").root
    monkeypatch.chdir(tmp_path)
    result = sign(root, key, Path("cert.json"))
    assert result.exit_code == 0, result.output
    verified = run("attest", "verify", str(root), "--trusted-key", f"{key}.pub")
    assert verified.exit_code == 0, verified.output
    assert verified.output.startswith(f"VALID: {root}: PASSED by ed25519:")
    # ... and the command certify printed verifies as printed
    line = next(x for x in result.output.splitlines() if x.strip().startswith("verify it:"))
    argv = shlex.split(line.split("verify it:", 1)[1])
    assert argv[:3] == ["meshcert", "attest", "verify"] and "cert.intoto.jsonl" in argv[5]
    assert run(*argv[1:]).exit_code == 0


def test_verify_without_an_attestation_names_every_place_it_looked(
        packages: PackageFactory, key: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    root = packages.build("llama").root
    monkeypatch.chdir(tmp_path)
    assert sign(root, key, tmp_path / "reports" / "run.json").exit_code == 0
    verified = run("attest", "verify", str(root), "--trusted-key", f"{key}.pub")
    assert verified.exit_code == 1
    assert codes.MISSING in verified.output
    assert str(root / "attestations" / "meshcert.intoto.jsonl") in verified.output
    assert str(tmp_path / "cert.intoto.jsonl") in verified.output
    assert "give that file with --attestation" in verified.output
    assert "Certify the package with" not in verified.output  # no advice to do it again


def test_an_attestation_beside_another_package_is_one_finding_naming_it(
        packages: PackageFactory, key: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    signed, other = packages.build("llama").root, packages.build("llama", layers=3).root
    monkeypatch.chdir(tmp_path)
    assert sign(signed, key, Path("cert.json")).exit_code == 0
    verified = run("attest", "verify", str(other), "--trusted-key", f"{key}.pub", "--json")
    assert verified.exit_code == 1
    data = json.loads(verified.output)
    assert data["valid"] is False and len(data["findings"]) == 1
    found = data["findings"][0]
    assert found["code"] == codes.SUBJECT_MISMATCH
    assert found["message"].startswith(f"{tmp_path / 'cert.intoto.jsonl'} line 1 is not this "
                                       "package's attestation")
    assert found["remediation"].startswith("Do not trust")
