"""Publishing with a signer (`--attest-key`): the attestation is committed after the published
commit certified passed, the catalog pins the commit that carries it, and `catalog certify
--trust-attested` accepts the package there without reading a header."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from meshcert.attest.catalog_trust import CatalogTrust
from meshcert.attest.keys import load_private, load_public
from meshcert.attest.trust import TrustPolicy
from meshcert.catalog.run import CatalogRequest, certify_catalog
from meshcert.catalog.sources import open_catalog
from meshcert.certify.report import CertReport
from meshcert.cli import app
from meshcert.cli.attest_sign import publish_signer
from meshcert.publish.attestation import ATTESTATION_PATH
from meshcert.publish.requests import PublishRequest
from meshcert.publish.service import publish_package
from meshcert.testing import llama_spec, write_package, write_source_gguf
from tests.support.attestations import keypair
from tests.support.hub_server import FakeHub

TARGET = "meshllm/tiny-signed"
CATALOG = "meshllm/catalog"


def test_the_attestation_lands_after_the_certified_commit_and_the_catalog_pins_it(
        hub: FakeHub, tmp_path: Path) -> None:
    pair = keypair(tmp_path / "keys")
    hub.commit(CATALOG, {"README.md": b"# catalog\n"}, repo_type="dataset")
    info = write_package(llama_spec(block_count=3), tmp_path / "pkg")
    result = publish_package(PublishRequest(
        str(info.root), TARGET, catalog=CATALOG,
        sign=publish_signer(load_private(pair.private_path))))
    assert result.status == "published", result.message
    head = hub.repos[TARGET].branches["main"]
    assert result.attestation_commit == head == result.commits[-1]
    assert hub.repos[TARGET].commits[head].parent == result.commit
    assert result.catalog is not None
    pinned = hub.file_bytes(CATALOG, "main", result.catalog.path, repo_type="dataset")
    assert head.encode() in pinned and result.commit is not None
    assert result.commit.encode() not in pinned
    policy = TrustPolicy.of_keys([load_public(pair.key_id)], mode="enforce")
    run = certify_catalog(open_catalog(f"hf://datasets/{CATALOG}"), CatalogRequest(
        attestation=CatalogTrust(policy, trust_attested=True)))
    row = run.report.packages[0]
    assert row.status == "passed" and row.attested_only and row.requests == 3


def test_no_attestation_when_the_signer_declines(hub: FakeHub, tmp_path: Path) -> None:
    def decline(_report: CertReport) -> str:
        return "the certification is incomplete"

    info = write_package(llama_spec(block_count=3), tmp_path / "pkg")
    result = publish_package(PublishRequest(str(info.root), TARGET, sign=decline))
    assert result.status == "published" and result.attestation_commit is None
    assert result.attestation_note == "no attestation made: the certification is incomplete"
    assert ATTESTATION_PATH not in hub.paths_at(TARGET, "main")


def test_package_write_publish_takes_attest_key(hub: FakeHub, tmp_path: Path) -> None:
    pair = keypair(tmp_path / "keys")
    source = write_source_gguf(llama_spec(block_count=4), tmp_path / "src" / "tiny.gguf")
    done = CliRunner().invoke(app, [
        "package", "write", str(source), "--out-dir", str(tmp_path / "pkg"), "--model-id",
        "meshcert/tiny-llama-GGUF:F16", "--source-repo", "meshcert/tiny-llama",
        "--source-revision", "5f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c",  # §6.1: pinned
        "--publish", TARGET, "--attest-key", str(pair.private_path), "--quiet"])
    assert done.exit_code == 0, done.output
    assert ATTESTATION_PATH in hub.paths_at(TARGET, "main")
    head = hub.repos[TARGET].branches["main"]
    verify = CliRunner().invoke(app, ["attest", "verify", f"hf://{TARGET}@{head}",
                                      "--trusted-key", str(pair.public_path)])
    assert verify.exit_code == 0, verify.output


def test_attest_key_needs_publish(tmp_path: Path) -> None:
    pair = keypair(tmp_path / "keys")
    source = write_source_gguf(llama_spec(block_count=4), tmp_path / "src" / "tiny.gguf")
    done = CliRunner().invoke(app, [
        "package", "write", str(source), "--out-dir", str(tmp_path / "pkg"), "--model-id",
        "meshcert/tiny-llama-GGUF:F16", "--attest-key", str(pair.private_path)])
    assert done.exit_code == 2 and "--attest-key only applies with --publish" in done.output
