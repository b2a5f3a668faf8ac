"""`package publish --attest-key`: the published commit certifies passed, then its signed
attestation is committed as attestations/meshcert.intoto.jsonl on top, where `attest verify
hf://...` finds it and verifies it at that later commit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.attest import codes
from meshcert.cli import app
from meshcert.testing import PackageInfo, llama_spec, write_package
from tests.support.hub_fixture import serving
from tests.support.hub_server import FakeHub

TOKEN = "hf_publisher_0123456789abcdef"
runner = CliRunner()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        fake.add_token(TOKEN, user="alice", orgs={"meshllm": "write"})
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield fake


@pytest.fixture
def package(tmp_path: Path) -> PackageInfo:
    return write_package(llama_spec(block_count=3), tmp_path / "pkg")


@pytest.fixture
def key(tmp_path: Path) -> Path:
    assert runner.invoke(app, ["attest", "keygen", "--out", str(tmp_path / "k")]).exit_code == 0
    return tmp_path / "k"


def test_publish_commits_the_attestation_after_the_certified_commit(
        hub: FakeHub, package: PackageInfo, key: Path) -> None:
    result = runner.invoke(app, ["package", "publish", str(package.root), "--target",
                                 "meshllm/tiny", "--attest-key", f"{key}.key"])
    assert result.exit_code == 0, result.output
    repo = hub.repos["meshllm/tiny"]
    head = repo.branches["main"]
    certified = repo.commits[head].parent
    assert certified is not None
    assert "attestations/meshcert.intoto.jsonl" in repo.commits[head].files
    assert "attestations/meshcert.intoto.jsonl" not in repo.commits[certified].files
    assert f"  attestation: attestations/meshcert.intoto.jsonl at commit {head}, on top of " \
        f"the certified commit {certified} (no artifact changed)" in result.stdout
    assert f"published, certified and signed: hf://meshllm/tiny@{head}" in result.stdout
    verify = runner.invoke(app, ["attest", "verify", f"hf://meshllm/tiny@{head}",
                                 "--trusted-key", f"{key}.pub", "--json"])
    assert verify.exit_code == 0, verify.output
    assert codes.OTHER_COMMIT in verify.output and certified in verify.output
    secret = "".join(Path(f"{key}.key").read_text().splitlines()[1:-1])
    stored = b"".join(hub.blobs.values())
    assert secret.encode() not in stored and secret not in result.output + verify.output


def test_a_public_key_to_sign_with_is_refused_before_uploading(
        hub: FakeHub, package: PackageInfo, key: Path) -> None:
    result = runner.invoke(app, ["package", "publish", str(package.root), "--target",
                                 "meshllm/tiny", "--attest-key", f"{key}.pub"])
    assert result.exit_code == 2 and "holds a public key" in result.output
    assert "meshllm/tiny" not in hub.repos


def printed(output: str, label: str) -> str:
    line = next(x for x in output.splitlines() if x.strip().startswith(label))
    return line.split(label, 1)[1].strip()


def test_the_ref_printed_is_the_one_pinned_and_it_verifies(
        hub: FakeHub, package: PackageInfo, key: Path) -> None:
    """One ref per publication: the "immutable ref" and "run it" lines, the catalog's pin and
    the commit holding the attestation are one commit, and `attest verify` of it is VALID."""
    hub.commit("meshllm/catalog", {"README.md": b"# catalog\n"}, repo_type="dataset")
    result = runner.invoke(app, ["package", "publish", str(package.root), "--target",
                                 "meshllm/tiny", "--attest-key", f"{key}.key",
                                 "--catalog", "meshllm/catalog"])
    assert result.exit_code == 0, result.output
    ref = printed(result.stdout, "immutable ref:")
    assert printed(result.stdout, "run it:") == f"mesh-llm serve --model {ref} --split"
    head = hub.repos["meshllm/tiny"].branches["main"]
    assert ref == f"hf://meshllm/tiny@{head}"
    entry_path = printed(result.stdout, "catalog meshllm/catalog:").split(",")[0]
    entry = hub.file_bytes("meshllm/catalog", "main", entry_path, repo_type="dataset")
    certified = hub.repos["meshllm/tiny"].commits[head].parent
    assert certified is not None and certified.encode() not in entry
    assert f'"revision": "{head}"'.encode() in entry
    verify = runner.invoke(app, ["attest", "verify", ref, "--trusted-key", f"{key}.pub"])
    assert verify.exit_code == 0, verify.output
    assert verify.output.startswith(f"VALID: {ref}: PASSED by ed25519:")
    assert codes.MISSING not in verify.output
