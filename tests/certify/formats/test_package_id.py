"""The canonical v2 package id: what it covers and what it ignores (package-v2.md)."""

from __future__ import annotations

import copy
import json
from typing import Any

from certify.formats.package_id import canonical_bytes, compute_package_id

MANIFEST: dict[str, Any] = {
    "created_at_unix_secs": 1767225600,
    "generator_version": "skippy-model-package 0.1.54",
    "native_abi_version": "0.1.54",
    "schema_version": 2,
    "package_id": "sha256:" + "0" * 64,
    "model_id": "Qwen/Qwen3-8B-GGUF:Q4_K_M",
    "format": "gguf",
    "layer_count": 2,
    "source_model": {
        "files": [{"sha256": "b" * 64, "path": "z.gguf", "byte_size": 7},
                  {"path": "a.gguf", "byte_size": 5, "sha256": "a" * 64}],
        "primary_file": "a.gguf", "sha256": "a" * 64, "metadata_artifact_id": "metadata",
        "repo": "Qwen/Qwen3-8B-GGUF", "revision": None,
    },
    "artifact_catalog": {"entries": [
        {"sha256": "c" * 64, "byte_size": 3, "path": "layers/layer-00001.gguf",
         "id": "layer-00001"},
        {"id": "metadata", "path": "shared/metadata.gguf", "byte_size": 1, "sha256": "d" * 64},
    ]},
    "sidecars": [],
    "generation": {"speculative_decoding": {
        "strategies": {"mtp": {"window_policy": {"max_window": 1, "min_window": 1,
                                                 "initial_window": 1, "default": "fixed"},
                               "layer_indices": [1], "prediction_depth": 1,
                               "type": "native-mtp"}},
        "default": "mtp", "proposers": {}}},
}


def test_canonical_bytes_use_struct_order_sorted_lists_and_skip_absent_values() -> None:
    text = canonical_bytes(MANIFEST).decode()
    assert text.startswith('{"schema_version":2,"package_id":"","model_id":')
    assert text.endswith(',"native_abi_version":"0.1.54","generator_version":'
                         '"skippy-model-package 0.1.54","created_at_unix_secs":0}')
    parsed = json.loads(text)
    assert list(parsed["source_model"]) == ["sha256", "metadata_artifact_id", "repo",
                                            "primary_file", "files"]  # null revision: absent
    assert [f["path"] for f in parsed["source_model"]["files"]] == ["a.gguf", "z.gguf"]
    assert list(parsed["source_model"]["files"][1]) == ["path", "byte_size", "sha256"]
    assert [e["id"] for e in parsed["artifact_catalog"]["entries"]] == ["layer-00001",
                                                                        "metadata"]
    assert "sidecars" not in parsed  # empty: omitted
    spec = parsed["generation"]["speculative_decoding"]
    assert list(spec) == ["default", "strategies"]  # empty proposers map: omitted
    assert list(spec["strategies"]["mtp"]) == ["type", "prediction_depth", "layer_indices",
                                               "window_policy"]
    assert list(spec["strategies"]["mtp"]["window_policy"]) == [
        "default", "initial_window", "min_window", "max_window"]
    assert ", " not in text and ": " not in text  # compact separators


def test_id_ignores_the_declared_id_the_time_and_list_order() -> None:
    other = copy.deepcopy(MANIFEST)
    other["package_id"] = "sha256:" + "f" * 64
    other["created_at_unix_secs"] = 1
    other["artifact_catalog"]["entries"].reverse()
    other["source_model"]["files"].reverse()
    assert compute_package_id(other) == compute_package_id(MANIFEST)


def test_id_covers_identity_artifacts_and_generation() -> None:
    base = compute_package_id(MANIFEST)
    for edit in (lambda m: m.update(model_id="other"),
                 lambda m: m["artifact_catalog"]["entries"][0].update(byte_size=4),
                 lambda m: m["generation"]["speculative_decoding"].update(default="x"),
                 lambda m: m["source_model"].update(revision="main")):
        other = copy.deepcopy(MANIFEST)
        edit(other)
        assert compute_package_id(other) != base


def test_non_ascii_is_written_as_utf8_like_serde_json() -> None:
    other = copy.deepcopy(MANIFEST)
    other["model_id"] = "Qwén/模型"
    assert "Qwén/模型".encode() in canonical_bytes(other)


def test_odd_shapes_never_raise() -> None:
    assert compute_package_id({"artifact_catalog": [], "source_model": "x",
                               "generation": {"speculative_decoding": 3}}).startswith("sha256:")


# generation.request_defaults as a mesh-llm branch declares it (values made up for the test)
REQUEST_DEFAULTS: dict[str, Any] = {
    "profiles": {
        "plain": {"provenance": {"url": "https://example.org/card", "section": "Usage",
                                 "file": "README.md", "revision": "c" * 40,
                                 "source_repo": "org/model"},
                  "temperature": 1, "top_k": 40, "min_p": 0.0, "top_p": 0.9,
                  "logit_bias": {"7": -1, "12": 0.5},
                  "reasoning": {"budget": 0, "enabled": "off"}},
        "deep": {"temperature": 0.6, "max_tokens": 4096, "dry": {"multiplier": 1, "base": 1.75},
                 "provenance": {"source_repo": "org/model", "revision": "c" * 40,
                                "file": "README.md", "section": "Usage",
                                "url": "https://example.org/card"}},
    },
    "selection": {"reasoning_disabled": "plain", "default": "deep"},
}


def _with_request_defaults() -> dict[str, Any]:
    manifest = copy.deepcopy(MANIFEST)
    manifest["generation"]["request_defaults"] = copy.deepcopy(REQUEST_DEFAULTS)
    return manifest


def test_released_mesh_llm_has_no_request_defaults_so_the_default_form_leaves_it_out() -> None:
    assert canonical_bytes(_with_request_defaults()) == canonical_bytes(MANIFEST)


def test_the_branch_form_hashes_request_defaults_first_in_its_declared_order() -> None:
    text = canonical_bytes(_with_request_defaults(), branch=True).decode()
    start = text.index('"generation":{') + len('"generation":{')
    assert text[start:].startswith(
        '"request_defaults":{"selection":{"default":"deep","reasoning_disabled":"plain"},'
        '"profiles":{"deep":{"max_tokens":4096,"temperature":0.6,'
        '"dry":{"multiplier":1.0,"base":1.75},"provenance":{"source_repo":"org/model",')
    assert ('"plain":{"temperature":1.0,"top_p":0.9,"top_k":40,"min_p":0.0,'
            '"logit_bias":{"12":0.5,"7":-1.0},"reasoning":{"enabled":"off","budget":0},'
            '"provenance":{') in text
    assert '},"speculative_decoding":{"default":"mtp"' in text


def test_the_branch_form_is_the_released_one_without_request_defaults() -> None:
    assert compute_package_id(MANIFEST, branch=True) == compute_package_id(MANIFEST)


def test_floats_are_spelled_as_serde_json_spells_them() -> None:
    from certify.formats.package_id import serde_f64

    spelled = {1.0: "1.0", 0.95: "0.95", 1e-5: "0.00001", 1e-6: "1e-6", 1.5e-7: "1.5e-7",
               1e15: "1000000000000000.0", 1e16: "1e16", 2.5e20: "2.5e20", -0.5: "-0.5",
               0.1 + 0.2: "0.30000000000000004"}
    assert {x: serde_f64(x) for x in spelled} == spelled
