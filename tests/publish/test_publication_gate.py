"""`package publish` refuses, before hashing, certifying or uploading anything, a v2 package
mesh-llm's HF publication job would refuse (mesh-llm-0.79.md §6.1): exit 2, the rule named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.certify.v2_packages import build_v2, edit_manifest
from tests.support.hub_server import FakeHub

TARGET = "meshllm/tiny-llama-layers"


@pytest.mark.parametrize("edit,says", [
    (lambda m: m["source_model"].update(revision="main"),
     "immutable source revision refused: source revision 'main' is not a 40-hex commit"),
    (lambda m: m["source_model"].pop("revision"),
     "package source identity does not match resolved source: source_model.revision is absent"),
    (lambda m: m["artifact_catalog"]["entries"][-1].update(path="README.md"),
     "package artifact size/path roster refused: README.md named as an artifact"),
])
def test_publish_refuses_before_work(hub: FakeHub, tmp_path: Path, edit: Any,
                                     says: str) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, edit)
    done = CliRunner().invoke(app, ["package", "publish", str(pkg.root), "--target", TARGET])
    assert done.exit_code == 2, done.output
    assert says in done.output and "Traceback" not in done.output
    assert TARGET not in hub.repos  # nothing created, nothing uploaded


def test_an_oversized_manifest_is_refused_by_its_size_alone(hub: FakeHub,
                                                            tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    manifest = pkg.root / "model-package.json"
    manifest.write_bytes(manifest.read_bytes()[:-1] + b" " * (8 << 20) + b"}")
    done = CliRunner().invoke(app, ["package", "publish", str(pkg.root), "--target", TARGET])
    assert done.exit_code == 2, done.output
    assert "package root byte bound exceeded" in done.output
    assert TARGET not in hub.repos
