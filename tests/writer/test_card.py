"""The model card meshcert writes (one generator, for `package write` and `package publish`)
says what the manifest says: ids, layer count, total size, every publisher file with its role,
the typed defaults, every request profile with its provenance, speculative decoding, the oldest
mesh-llm that loads it; and it passes the readme check, for v1, v2, and the real SmolLM2 written
with its config.json, generation_config.json and two request profiles."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.card_facts import stated_facts, total_bytes
from meshcert.testing import llama_spec, write_package, write_source_gguf
from meshcert.writer.card import render_card
from tests.conftest import certify_dir
from tests.support.real_models import smollm2_path
from tests.support.splits import split_v2
from tests.writer.builders import tiny_source
from tests.writer.builders import write_package as write_split
from tests.writer.test_write_publisher import REPO, REV, inputs, request_defaults

SMOLLM2_REPO = "HuggingFaceTB/SmolLM2-135M-Instruct"
# config.json with SmolLM2-135M's geometry (read from the GGUF's llama.* keys); the rest of the
# keys as Hugging Face's config.json has them
SMOLLM2_CONFIG = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                  "num_hidden_layers": 30, "hidden_size": 576, "num_attention_heads": 9,
                  "num_key_value_heads": 3, "max_position_embeddings": 8192,
                  "intermediate_size": 1536, "vocab_size": 49152, "torch_dtype": "bfloat16"}


def _publish_card(root: Path, manifest: dict[str, Any], **kwargs: Any) -> str:
    raw = (root / "model-package.json").read_bytes()
    card = render_card(manifest, hashlib.sha256(raw).hexdigest(),
                       target="meshllm/tiny-layers", **kwargs)
    (root / "README.md").write_text(card, encoding="utf-8")
    return card


def _readme_findings(root: Path) -> list[str]:
    return [f"{f.code}: {f.message}" for f in certify_dir(root).findings
            if f.code.startswith("readme")]


def test_v1_card_passes_the_readme_check(tmp_path: Path) -> None:
    info = write_package(llama_spec(block_count=3), tmp_path / "v1")
    card = _publish_card(info.root, info.manifest)
    assert _readme_findings(info.root) == []
    assert card.startswith("---\nlibrary_name: mesh-llm\nbase_model:\n- ")
    assert "- layer-package" in card and "| **Activation width** | 64 |" in card
    assert "mesh-llm serve --model hf://meshllm/tiny-layers@<commit> --split" in card
    assert "| **Generation defaults** | none declared |" in card  # a llama declares none
    assert "| **Oldest mesh-llm that loads it** | no minimum known (a v1 package) |" in card


@pytest.fixture
def v2_package(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    spec = llama_spec(block_count=3)
    source = write_source_gguf(spec, tmp_path / "src" / "Tiny-Q8_0.gguf")
    package = split_v2(source, tmp_path / "v2", model_id="org/Tiny-GGUF:Q8_0",
                       repo="org/Tiny-GGUF", revision="a" * 40)
    return package.root, package.manifest


def test_v2_card_reads_the_v2_fields(v2_package: tuple[Path, dict[str, Any]]) -> None:
    root, manifest = v2_package
    card = _publish_card(root, manifest, experimental=True)
    assert _readme_findings(root) == []
    assert f"| **Package id** | `{manifest['package_id']}` |" in card
    assert f"| **Skippy ABI version** | `{manifest['native_abi_version']}` |" in card
    assert "Activation width" not in card  # v2 manifests have none, and no width was given
    assert total_bytes(manifest) > 0 and f"({total_bytes(manifest):,} bytes)" in card
    assert "| **Quantization** | `Q8_0` |" in card
    assert "- experimental" in card and "[!WARNING]" in card
    assert "| **Oldest mesh-llm that loads it** | v0.76.0 (package v2) |" in card
    assert "| **Generation defaults** | none declared |" in card


def test_a_written_package_with_publisher_files_and_profiles_names_them(tmp_path: Path
                                                                        ) -> None:
    """The card `package write` puts in the package once said "Generation defaults: none
    declared" for this manifest and never named its publisher files."""
    given = inputs(tmp_path / "inputs")
    result = write_split(tiny_source(tmp_path), tmp_path / "pkg", source_repo=REPO,
                         source_revision=REV, generation_defaults=str(given["defaults.json"]),
                         publisher_metadata=[str(given[n]) for n in (
                             "config.json", "generation_config.json")])
    card = (tmp_path / "pkg" / "README.md").read_text(encoding="utf-8")
    _assert_states_the_manifest(card, result.manifest)
    assert _readme_findings(tmp_path / "pkg") == []


def _assert_states_the_manifest(card: str, manifest: dict[str, Any]) -> None:
    assert "none declared" not in card
    facts = stated_facts(card)
    assert facts["model id"] == [f"`{manifest['model_id']}`"]
    assert facts["package id"] == [f"`{manifest['package_id']}`"]
    assert facts["layer count"] == [str(manifest["layer_count"])]
    assert facts["default request profile"] == ["`recommended`"]
    assert facts["compute dtype"] == ["`bf16` (from `metadata/config.json /torch_dtype`)"]
    assert facts["oldest mesh-llm that loads it"] == ["v0.78.1 (generation.request_defaults)"]
    assert f"({total_bytes(manifest):,} bytes)" in card
    for entry in manifest["publisher_metadata"]:
        assert f"| {entry['role']} | `metadata/{entry['source_path']}` | " \
               f"{entry['source_path']} at {entry['source_repo']}@{entry['source_revision']}" \
               in card
    profiles = manifest["generation"]["request_defaults"]["profiles"]
    for name, profile in profiles.items():
        row = next(line for line in card.splitlines() if line.startswith(f"| `{name}` |"))
        assert profile["provenance"]["url"] in row and "generation_config" in row
    assert "| `direct` | when reasoning is disabled | temperature 1.0" in card
    assert "| `recommended` | default | temperature 0.6, top_p 0.95, top_k 20" in card


@pytest.mark.slow
def test_the_real_smollm2_card_states_its_manifest(tmp_path: Path) -> None:
    """SmolLM2-135M written as mesh-llm's HF job writes it: config.json and
    generation_config.json copied, two request profiles from generation_config.json."""
    folder = tmp_path / "inputs"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(SMOLLM2_CONFIG, indent=2))
    (folder / "generation_config.json").write_text('{\n  "temperature": 0.6\n}\n')
    (folder / "defaults.json").write_text(json.dumps(request_defaults(SMOLLM2_REPO, REV)))
    result = write_split(smollm2_path(), tmp_path / "pkg",
                         model_id=f"{SMOLLM2_REPO}-GGUF:Q4_1", source_repo=SMOLLM2_REPO,
                         source_revision=REV, generation_defaults=str(folder / "defaults.json"),
                         publisher_metadata=[str(folder / "config.json"),
                                             str(folder / "generation_config.json")])
    card = (tmp_path / "pkg" / "README.md").read_text(encoding="utf-8")
    assert result.manifest["layer_count"] == 30
    _assert_states_the_manifest(card, result.manifest)
    assert "| **Activation width** | 576 |" in card
    report = certify_dir(tmp_path / "pkg")
    assert [f.code for f in report.findings if f.code.startswith("readme")] == []


def test_the_readme_check_flags_a_card_that_hides_the_profiles(tmp_path: Path) -> None:
    """The card meshcert used to write for this manifest: "Generation defaults: none declared"
    and no profile named. The check now says both."""
    given = inputs(tmp_path / "inputs")
    write_split(tiny_source(tmp_path), tmp_path / "pkg", source_repo=REPO, source_revision=REV,
                generation_defaults=str(given["defaults.json"]),
                publisher_metadata=[str(given["config.json"])])
    path = tmp_path / "pkg" / "README.md"
    card = path.read_text(encoding="utf-8")
    start, end = card.index("## Generation Defaults"), card.index("## Publisher Files")
    path.write_text(card[:start] + "- Generation defaults: none declared\n\n" + card[end:],
                    encoding="utf-8")
    assert sorted(_readme_findings(tmp_path / "pkg")) == [
        "readme_contradicts_manifest: README.md says generation defaults 'none declared'; "
        "model-package.json says 'compute dtype bf16; request profiles direct, recommended'",
        "readme_missing_field: README.md does not mention the generation defaults: request "
        "profile 'direct'",
        "readme_missing_field: README.md does not mention the generation defaults: request "
        "profile 'recommended'"]
