"""v2 generation: the writer's native-MTP shape passes; the strict grammar and the runtime
value rules give mesh-llm's v2 codes (package-v2.md)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from tests.certify.v2_packages import build_v2, edit_manifest
from tests.conftest import certify_dir
from tests.support.splits import SplitPackage

WINDOW = {"default": "fixed", "initial_window": 1, "min_window": 1, "max_window": 1}


@pytest.fixture(scope="module")
def glm_v2(tmp_path_factory: pytest.TempPathFactory) -> SplitPackage:
    return build_v2(tmp_path_factory.mktemp("glm"), kind="glm-dsa", layers=4)


def _with(spec: dict[str, Any]) -> Any:
    def edit(m: dict[str, Any]) -> None:
        m["generation"] = {"speculative_decoding": spec}
    return edit


def _codes(pkg: SplitPackage, edit: Any, tmp_path: Path) -> set[str]:
    import shutil

    copy_root = tmp_path / "copy"
    shutil.copytree(pkg.root, copy_root)
    clone = SplitPackage(copy_root, copy.deepcopy(pkg.manifest), pkg.source_path)
    edit_manifest(clone, edit)
    return {f.code for f in certify_dir(copy_root).findings}


def test_the_v2_writers_native_mtp_generation_passes(glm_v2: SplitPackage) -> None:
    spec = glm_v2.manifest["generation"]["speculative_decoding"]
    assert spec["strategies"]["mtp"]["layer_indices"] == [3]
    report = certify_dir(glm_v2.root)
    assert report.status == "passed", [f.message for f in report.findings if f.severity != "info"]


MTP = {"type": "native-mtp", "prediction_depth": 1, "layer_indices": [3], "window_policy": WINDOW}
SUFFIX = {"type": "ngram-suffix", "ngram_min": 3, "ngram_max": 8, "max_proposal_tokens": 16,
          "history_scope": "request"}
CASES = [
    ({"default": "nope", "strategies": {"mtp": MTP}}, "unknown_strategy"),
    ({"default": "mtp", "strategies": {"mtp": {"type": "native-mtp", "proposer": "ghost"}}},
     "unknown_proposer"),
    # the v1 writer's shape: a proposer AND the inline fields
    ({"default": "mtp", "proposers": {"mtp": {"type": "native-mtp", "prediction_depth": 1,
                                              "layer_indices": [3]}},
      "strategies": {"mtp": {"type": "native-mtp", "proposer": "mtp", "prediction_depth": 1,
                             "layer_indices": [3]}}}, "invalid_generation_value"),
    ({"default": "mtp", "strategies": {"mtp": {"type": "native-mtp"}}},
     "invalid_generation_value"),
    ({"default": "mtp", "strategies": {"mtp": {**MTP, "type": "draft-model"}}},
     "invalid_generation_value"),
    ({"default": "mtp", "strategies": {"mtp": {**MTP, "colour": "red"}}},
     "invalid_generation_value"),
    ({"default": "mtp", "strategies": {"mtp": {**MTP, "prediction_depth": 2}}},
     "invalid_generation_value"),
    ({"default": "mtp", "strategies": {"mtp": {**MTP, "layer_indices": [7]}}},
     "layer_out_of_bounds"),
    ({"default": "mtp", "strategies": {"mtp": {**MTP, "layer_indices": [1]}}},
     "native_mtp_layer_missing_tensors"),
    ({"default": "mtp", "strategies": {"mtp": {**MTP, "window_policy": {**WINDOW,
                                                                         "min_window": 2}}}},
     "invalid_generation_value"),
    ({"default": "s", "proposers": {"sfx": {**SUFFIX, "history_scope": "global"}},
      "strategies": {"s": {"type": "ngram-suffix", "proposer": "sfx"}}},
     "invalid_generation_value"),
    ({"default": "c", "proposers": {"sfx": SUFFIX},
      "strategies": {"c": {"type": "composite", "primary": "sfx", "extender": "sfx",
                           "extension_policy": {"max_tokens": 4}}}},
     "invalid_generation_value"),
    ({"default": "mtp", "strategies": {"mtp": MTP}, "colour": 1}, "unknown_manifest_field"),
]


@pytest.mark.parametrize(("spec", "code"), CASES)
def test_each_generation_rule_gives_its_v2_code(glm_v2: SplitPackage, tmp_path: Path,
                                                 spec: dict[str, Any], code: str) -> None:
    assert code in _codes(glm_v2, _with(spec), tmp_path)


def test_a_valid_composite_strategy_passes(glm_v2: SplitPackage, tmp_path: Path) -> None:
    spec = {"default": "mtp-suffix",
            "proposers": {"head": {"type": "native-mtp", "prediction_depth": 1,
                                   "layer_indices": [3]}, "sfx": SUFFIX},
            "strategies": {"mtp-suffix": {"type": "composite", "primary": "head",
                                          "extender": "sfx",
                                          "extension_policy": {"max_tokens": 8}}}}
    found = _codes(glm_v2, _with(spec), tmp_path)
    # glm-dsa is not on mesh-llm's split roster; every v2 package names its oldest mesh-llm;
    # the card was written for the manifest before this edit (another package id now)
    assert found <= {"skippy_abi_not_checked", "readme_missing_field",
                     "readme_contradicts_manifest", "architecture_not_split_certified",
                     "mesh_llm_minimum_version"}, found


def test_llama_v2_without_mtp_tensors_declares_no_generation(tmp_path: Path) -> None:
    assert "generation" not in build_v2(tmp_path).manifest


def test_glm_dsa_v2_is_held_to_the_architecture_contract(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path, kind="glm-dsa", drop=("blk.1.attn_k_b.weight",))
    report = certify_dir(pkg.root)
    messages = [f.message for f in report.findings if f.code == "glm_dsa_contract_violation"]
    assert messages and "attn_k_b" in messages[0] and "1" in messages[0]


def _composite(**extension: int) -> dict[str, Any]:
    return {"default": "mtp-suffix",
            "proposers": {"head": {"type": "native-mtp", "prediction_depth": 1,
                                   "layer_indices": [3]}, "sfx": SUFFIX},
            "strategies": {"mtp-suffix": {"type": "composite", "primary": "head",
                                          "extender": "sfx",
                                          "extension_policy": {"max_tokens": 8, **extension}}}}


def _generation_messages(pkg: SplitPackage, tmp_path: Path, **extension: int) -> list[str]:
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(pkg.root, root)
    clone = SplitPackage(root, copy.deepcopy(pkg.manifest), pkg.source_path)
    edit_manifest(clone, _with(_composite(**extension)))
    report = certify_dir(root)
    assert report.status == "failed"
    return [f.message for f in report.findings if f.code == "invalid_generation_value"]


def test_v2_initial_tokens_above_max_tokens_is_invalid(glm_v2: SplitPackage,
                                                       tmp_path: Path) -> None:
    [message] = _generation_messages(glm_v2, tmp_path, initial_tokens=9)
    assert "initial_tokens 9 is above max_tokens 8" in message


def test_v2_zero_initial_tokens_is_invalid(glm_v2: SplitPackage, tmp_path: Path) -> None:
    [message] = _generation_messages(glm_v2, tmp_path, initial_tokens=0)
    assert "initial_tokens is 0" in message


def test_v2_zero_tail_backoff_proposals_is_invalid(glm_v2: SplitPackage, tmp_path: Path) -> None:
    [message] = _generation_messages(glm_v2, tmp_path, tail_backoff_proposals=0)
    assert "tail_backoff_proposals is 0" in message


# --- mesh-llm-0.79.md §1.4, §2.5: generation without speculative_decoding ----------------------
RD_REV = "b" * 40
REQUEST_DEFAULTS = {"selection": {"default": "chat"}, "profiles": {"chat": {
    "temperature": 0.6, "min_p": 0, "provenance": {
        "source_repo": "org/m", "revision": RD_REV, "file": "README.md", "section": "Usage",
        "url": f"https://huggingface.co/org/m/blob/{RD_REV}/README.md"}}}}


@pytest.mark.parametrize("generation", [
    {"request_defaults": REQUEST_DEFAULTS},  # what mesh-llm's --generation-defaults writes
    {}, None, "absent"], ids=["request-defaults-only", "empty", "null", "absent"])
def test_mtp_tensors_without_a_declaration_pass_with_mesh_llms_warning(
        glm_v2: SplitPackage, tmp_path: Path, generation: Any) -> None:
    def edit(m: dict[str, Any]) -> None:
        if generation == "absent":
            m.pop("generation", None)
        else:
            m["generation"] = generation

    import shutil

    root = tmp_path / "copy"
    shutil.copytree(glm_v2.root, root)
    clone = SplitPackage(root, copy.deepcopy(glm_v2.manifest), glm_v2.source_path)
    edit_manifest(clone, edit)
    report = certify_dir(root)
    assert report.status == "passed", [f.message for f in report.findings if f.severity != "info"]
    [found] = [f for f in report.findings if f.code == "mtp_without_speculative_decoding"]
    assert found.severity == "warning" and "layer(s) 3" in found.message
    assert "native MTP will not be enabled" in found.message


def test_a_package_without_mtp_tensors_gets_no_mtp_warning(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, lambda m: m.update(generation={}))
    assert "mtp_without_speculative_decoding" not in {f.code for f in
                                                       certify_dir(pkg.root).findings}


@pytest.mark.parametrize("key", ["proposers", "strategies"])
def test_a_null_map_in_speculative_decoding_is_refused_as_serde_does(
        glm_v2: SplitPackage, tmp_path: Path, key: str) -> None:
    spec = copy.deepcopy(glm_v2.manifest["generation"]["speculative_decoding"])
    spec[key] = None
    assert "invalid_generation_value" in _codes(glm_v2, _with(spec), tmp_path)
