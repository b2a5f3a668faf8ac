"""The model card a publish writes holds mesh-llm's card fields and every item package.md asks
for, for v1 and for v2 (whose fields live elsewhere in the manifest)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from meshcert.publish.card import render_card, total_bytes
from meshcert.testing import llama_spec, write_package, write_source_gguf
from tests.conftest import certify_dir
from tests.support.splits import split_v2


def _publish_card(root: Path, manifest: dict[str, object], **kwargs: object) -> str:
    raw = (root / "model-package.json").read_bytes()
    card = render_card(manifest, manifest_sha256=hashlib.sha256(raw).hexdigest(),
                       target="meshllm/tiny-layers", **kwargs)  # type: ignore[arg-type]
    (root / "README.md").write_text(card, encoding="utf-8")
    return card


def _readme_findings(root: Path) -> list[str]:
    return [f.message for f in certify_dir(root).findings if f.code.startswith("readme")]


def test_v1_card_passes_the_readme_check(tmp_path: Path) -> None:
    info = write_package(llama_spec(block_count=3), tmp_path / "v1")
    card = _publish_card(info.root, info.manifest)
    assert _readme_findings(info.root) == []
    assert card.startswith("---\nlibrary_name: mesh-llm\nbase_model:\n- ")
    assert "- layer-package" in card and "| **Activation width** | 64 |" in card
    assert "mesh-llm serve --model hf://meshllm/tiny-layers@<commit> --split" in card


@pytest.fixture
def v2_package(tmp_path: Path) -> tuple[Path, dict[str, object]]:
    spec = llama_spec(block_count=3)
    source = write_source_gguf(spec, tmp_path / "src" / "Tiny-Q8_0.gguf")
    package = split_v2(source, tmp_path / "v2", model_id="org/Tiny-GGUF:Q8_0",
                       repo="org/Tiny-GGUF", revision="a" * 40)
    return package.root, package.manifest


def test_v2_card_reads_the_v2_fields(v2_package: tuple[Path, dict[str, object]]) -> None:
    root, manifest = v2_package
    card = _publish_card(root, manifest, experimental=True)
    assert _readme_findings(root) == []
    assert f"`{manifest['package_id']}`" in card
    assert f"| **Skippy ABI** | `{manifest['native_abi_version']}` |" in card
    assert "Activation width" not in card  # v2 manifests have none
    assert total_bytes(manifest) > 0 and "not recorded" not in card
    assert "| **Quantization** | `Q8_0` |" in card
    assert "- experimental" in card and "[!WARNING]" in card
