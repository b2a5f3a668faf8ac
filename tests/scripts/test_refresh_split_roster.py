"""scripts/refresh_split_roster.py: a mesh-llm checkout (or the file) in, meshcert's shipped
roster out; never the network."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

import pytest

from meshcert.certify.split_roster import roster_from_json

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "refresh_split_roster.py"
RECIPE = {"llama_upstream_sha": "a" * 40, "skippy_abi": "0.1.70", "patch_queue_sha256": "b" * 64}


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refresh_split_roster", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_refresh_from_a_checkout(tmp_path: Path) -> None:
    checkout = tmp_path / "mesh-llm"
    roster_file = checkout / "skippy/crates/skippy-api/src/split-certified.json"
    roster_file.parent.mkdir(parents=True)
    roster_file.write_text(json.dumps({"schema_version": 2, "native_recipe": RECIPE,
                                       "architectures": ["qwen3", "llama", "qwen3"]}))
    out = tmp_path / "out.json"
    code = load().main([str(checkout), "--commit", "c" * 40, "--retrieved", "2026-12-01",
                        "--out", str(out)])
    assert code == 0
    written = json.loads(out.read_text())
    assert written["architectures"] == ["llama", "qwen3"]
    assert written["native_recipe"] == RECIPE
    assert written["meshcert"] == {
        "source": "Mesh-LLM/mesh-llm skippy/crates/skippy-api/src/split-certified.json",
        "commit": "c" * 40, "retrieved": "2026-12-01", "partial": False}
    roster = roster_from_json(written)  # what certify reads
    assert roster.certifies("llama") and not roster.certifies("glm-dsa")


def test_refresh_from_the_file(tmp_path: Path) -> None:
    source = tmp_path / "split-certified.json"
    source.write_text(json.dumps({"schema_version": 2, "native_recipe": RECIPE,
                                  "architectures": ["gemma4"]}))
    out = tmp_path / "out.json"
    assert load().main([str(source), "--retrieved", "2026-12-01", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["meshcert"]["commit"] is None


@pytest.mark.parametrize("document", [
    {"schema_version": 1, "native_recipe": RECIPE, "architectures": ["llama"]},
    {"schema_version": 2, "native_recipe": {}, "architectures": ["llama"]},
    {"schema_version": 2, "native_recipe": RECIPE, "architectures": []},
])
def test_a_file_not_in_mesh_llms_shape_is_refused(tmp_path: Path, document: object,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "split-certified.json"
    source.write_text(json.dumps(document))
    out = tmp_path / "out.json"
    assert load().main([str(source), "--out", str(out)]) == 1
    assert not out.exists()
    assert capsys.readouterr().err.startswith("refresh_split_roster: ")


def test_a_checkout_without_a_roster(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert load().main([str(tmp_path), "--out", str(tmp_path / "o.json")]) == 1
    assert "no split-certified.json" in capsys.readouterr().err
