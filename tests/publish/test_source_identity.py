"""Provenance is checked or labelled: the source a package records (`--source-repo R
--source-revision REV`, the source file and its SHA-256) is asked of the Hub, here the in-repo
test Hub holding a real source repo, through the real huggingface_hub client:

- the right commit: verified, one request, and the card, cert.json and HTML say so;
- a made-up 40-hex commit: `package write` refuses before writing; a package that records it
  anyway (written offline) is refused by `package publish` and flagged
  `source_identity_mismatch` by `models certify` and `catalog certify`;
- offline: `source_identity_unverified`, and "claimed, not verified" in card and HTML;
- a source whose bytes are not the file at that commit: the write stops before the manifest.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from meshcert.catalog.run import CatalogRequest, certify_catalog
from meshcert.catalog.sources import LocalCatalog
from meshcert.cli import app
from meshcert.testing import llama_spec, write_source_gguf
from tests.support.catalog_packages import package_ref, variant, write_entry
from tests.support.hub_server import FakeHub

SOURCE_REPO = "meshcert/tiny-llama-GGUF"
FILE = "tiny-llama-F32.gguf"
MODEL_ID = f"{SOURCE_REPO}:F32"
MADE_UP = "0123456789abcdef0123456789abcdef01234567"
TARGET = "meshllm/tiny-llama-layers"


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return write_source_gguf(llama_spec(block_count=4), tmp_path / "src" / FILE)


@pytest.fixture
def commit(hub: FakeHub, source: Path) -> str:
    """The source repo on the Hub: the GGUF (an LFS file) at one commit."""
    sha = hub.publish_dir(SOURCE_REPO, source.parent)
    hub.reset_counters()
    return sha


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def write(source: Path, out: Path, revision: str, *extra: str) -> Result:
    return invoke("package", "write", str(source), "--out-dir", str(out), "--model-id",
                  MODEL_ID, "--source-repo", SOURCE_REPO, "--source-revision", revision,
                  *extra)


def certify(pkg: Path, tmp_path: Path) -> tuple[int, dict[str, Any], str]:
    cert, html = tmp_path / "c.json", tmp_path / "c.html"
    done = invoke("models", "certify", str(pkg), "--package-only", "--report-out", str(cert),
                  "--html", str(html))
    return done.exit_code, json.loads(cert.read_text()), html.read_text()


def test_the_right_commit_is_verified_with_one_request(hub: FakeHub, source: Path,
                                                       commit: str, tmp_path: Path) -> None:
    out, cert, html = tmp_path / "pkg", tmp_path / "cert.json", tmp_path / "cert.html"
    done = write(source, out, commit, "--report-out", str(cert), "--html", str(html))
    assert done.exit_code == 0, done.output
    assert hub.count("model_info") == 1 and hub.count() == 1  # the listing at that commit
    card = (out / "README.md").read_text()
    assert f"| **Source identity** | verified against the Hub at commit `{commit}` |" in card
    report = json.loads(cert.read_text())
    assert report["source_model"]["identity"] == "verified"
    assert report["source_model"]["identity_detail"] == commit
    assert "verified against the Hub" in html.read_text()
    assert "claimed, not verified" not in html.read_text() + card
    hub.reset_counters()
    status, again, page = certify(out, tmp_path)  # models certify asks again: one request
    assert status == 0 and again["source_model"]["identity"] == "verified"
    assert hub.count() == 1
    [check] = [c for c in again["checks"] if c["name"] == "source_identity"]
    assert check["status"] == "passed"


def test_a_made_up_commit_is_refused_before_writing(hub: FakeHub, source: Path, commit: str,
                                                    tmp_path: Path) -> None:
    out = tmp_path / "pkg"
    done = write(source, out, MADE_UP)
    assert done.exit_code == 2, done.output
    assert done.stderr.startswith("refused (source_identity_mismatch)")
    assert f"revision {MADE_UP} is not in {SOURCE_REPO}" in done.stderr
    assert not out.exists()


def test_a_file_not_at_that_commit_is_refused_before_writing(hub: FakeHub, source: Path,
                                                             commit: str, tmp_path: Path
                                                             ) -> None:
    done = write(source, tmp_path / "pkg", commit, "--source-file", f"q8/{FILE}")
    assert done.exit_code == 2 and f"q8/{FILE} is not in {SOURCE_REPO}" in done.stderr
    assert not (tmp_path / "pkg").exists()


def test_other_bytes_than_the_file_at_that_commit_stop_the_write_before_the_manifest(
        hub: FakeHub, source: Path, commit: str, tmp_path: Path) -> None:
    changed = tmp_path / "changed" / FILE
    changed.parent.mkdir()
    data = bytearray(source.read_bytes())
    data[-1] ^= 0xFF  # a tensor byte: same name, same size, another SHA-256
    changed.write_bytes(bytes(data))
    out = tmp_path / "pkg"
    done = write(changed, out, commit)
    assert done.exit_code == 2, done.output
    assert "aborted (source_identity_mismatch)" in done.stderr
    assert not (out / "model-package.json").exists()


def test_offline_the_claim_is_labelled_then_the_hub_refutes_it(
        hub: FakeHub, source: Path, commit: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    out, cert, html = tmp_path / "pkg", tmp_path / "cert.json", tmp_path / "cert.html"
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    done = write(source, out, MADE_UP, "--report-out", str(cert), "--html", str(html))
    assert done.exit_code == 0, done.output  # a warning: nothing could be checked
    assert hub.count() == 0
    card = (out / "README.md").read_text()
    assert "| **Source identity** | claimed, not verified (HF_HUB_OFFLINE is set" in card
    report = json.loads(cert.read_text())
    assert report["source_model"]["identity"] == "unverified"
    assert [f["severity"] for f in report["findings"]
            if f["code"] == "source_identity_unverified"] == ["warning"]
    assert "claimed, not verified" in html.read_text()

    monkeypatch.delenv("HF_HUB_OFFLINE")  # the Hub answers: that commit is not in the repo
    status, again, page = certify(out, tmp_path)
    assert status == 1
    [mismatch] = [f for f in again["findings"] if f["code"] == "source_identity_mismatch"]
    assert mismatch["severity"] == "error" and MADE_UP in mismatch["message"]
    assert mismatch["remediation"].startswith("Do not trust the claimed provenance")
    assert "does not match the Hub" in page

    published = invoke("package", "publish", str(out), "--target", TARGET)
    assert published.exit_code == 2, published.output
    assert "is not what the Hub holds" in published.output
    assert TARGET not in hub.repos  # nothing created, nothing uploaded

    package_commit = hub.publish_dir("ns/made-up-source", out)  # published by other means
    catalog = tmp_path / "catalog"
    write_entry(catalog, SOURCE_REPO, {"tiny-llama-F32": variant(
        package_ref("ns/made-up-source", revision=package_commit), source_repo=SOURCE_REPO,
        file=FILE, revision=MADE_UP)})
    run = certify_catalog(LocalCatalog(str(catalog)), CatalogRequest())
    [row] = run.report.packages
    assert "source_identity_mismatch" in row.error_codes and row.status == "failed"


def test_a_published_package_costs_one_request_more_for_its_source_identity(
        hub: FakeHub, source: Path, commit: str, tmp_path: Path) -> None:
    from meshcert.catalog.run import request_budget

    out = tmp_path / "pkg"
    assert write(source, out, commit, "-q").exit_code == 0
    sha = hub.publish_dir("ns/verified", out)
    artifacts = len(json.loads((out / "model-package.json").read_text())
                    ["artifact_catalog"]["entries"])
    hub.reset_counters()
    cert = tmp_path / "remote.json"
    done = invoke("models", "certify", f"hf://ns/verified@{sha}", "--package-only",
                  "--report-out", str(cert), "-q")
    assert done.exit_code == 0, done.output
    report = json.loads(cert.read_text())
    assert report["source_model"]["identity"] == "verified"
    # header-only: the package's fixed requests and two per artifact, and one model_info of
    # the source at its commit
    assert hub.count() == report["transfer"]["requests"] == request_budget(
        artifacts, pinned=True, source_identity=True)
    assert hub.count("model_info") == 2
