"""The canonical v2 package id: what it covers and what it ignores (package-v2.md,
mesh-llm-0.79.md §1.6)."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from meshcert.certify.formats.package_id import canonical_bytes, compute_package_id

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


# generation.request_defaults (mesh-llm-0.79.md §1.5; values made up for the test)
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


def test_request_defaults_are_hashed_first_in_generation_in_their_declared_order() -> None:
    text = canonical_bytes(_with_request_defaults()).decode()
    start = text.index('"generation":{') + len('"generation":{')
    assert text[start:].startswith(
        '"request_defaults":{"selection":{"default":"deep","reasoning_disabled":"plain"},'
        '"profiles":{"deep":{"max_tokens":4096,"temperature":0.6,'
        '"dry":{"multiplier":1.0,"base":1.75},"provenance":{"source_repo":"org/model",')
    assert ('"plain":{"temperature":1.0,"top_p":0.9,"top_k":40,"min_p":0.0,'
            '"logit_bias":{"12":0.5,"7":-1.0},"reasoning":{"enabled":"off","budget":0},'
            '"provenance":{') in text
    assert '},"speculative_decoding":{"default":"mtp"' in text
    assert compute_package_id(_with_request_defaults()) != compute_package_id(MANIFEST)


def test_there_is_no_branch_form_any_more() -> None:
    import inspect

    assert "branch" not in inspect.signature(compute_package_id).parameters


REV = "0123456789abcdefABCDEF0123456789abcdef01"  # upper-case hex: mesh-llm accepts it
# A v0.79-style root, keys and lists deliberately out of order. No package id from a real
# mesh-llm run exists for it: the expected bytes below are derived BY HAND from
# mesh-llm-0.79.md §1.1-1.6 (struct order; publisher_metadata sorted by role's declaration
# order, not by the role string; publisher_defaults {} kept; request_defaults before
# speculative_decoding; f64 fields in serde_json's spelling; integers left as integers).
PUBLISHER_MANIFEST: dict[str, Any] = {
    "created_at_unix_secs": 1762000000, "generator_version": "0.79.0",
    "native_abi_version": "0.1.67", "schema_version": 2, "package_id": "sha256:" + "0" * 64,
    "model_id": "org/M-GGUF:Q4_K_M", "format": "gguf", "layer_count": 2,
    "source_model": {"files": [{"path": "m.gguf", "byte_size": 9, "sha256": "a" * 64}],
                     "primary_file": "m.gguf", "sha256": "a" * 64,
                     "metadata_artifact_id": "metadata", "repo": "org/M-GGUF",
                     "revision": REV},
    "artifact_catalog": {"entries": [
        {"id": "publisher-config-json", "path": "metadata/config.json", "byte_size": 2,
         "sha256": "b" * 64},
        {"id": "metadata", "path": "shared/metadata.gguf", "byte_size": 1, "sha256": "d" * 64},
    ]},
    "generation": {"speculative_decoding": None, "request_defaults": {
        "selection": {"default": "d"},
        "profiles": {"d": {"seed": 7, "min_p": 0, "top_p": 1e-6, "top_k": 20,
                           "temperature": 0.00001, "repeat_penalty": 1e16,
                           "typical_p": 1.5e-7,
                           "provenance": {"url": f"https://h/{REV}", "section": "s",
                                          "file": "f", "revision": REV,
                                          "source_repo": "org/M"}}}}},
    "publisher_defaults": {},
    "publisher_metadata": [
        {"source_path": "tokenizer_config.json", "source_revision": REV,
         "source_repo": "org/M-GGUF", "artifact_id": "publisher-tokenizer-config-json",
         "role": "tokenizer_config"},
        {"role": "chat_template", "artifact_id": "publisher-chat-template-jinja",
         "source_repo": "org/M-GGUF", "source_revision": REV,
         "source_path": "chat_template.jinja"},
        {"role": "model_config", "artifact_id": "publisher-config-json",
         "source_repo": "org/M-GGUF", "source_revision": REV, "source_path": "config.json"},
    ],
}
PUBLISHER_CANONICAL = (
    '{"schema_version":2,"package_id":"","model_id":"org/M-GGUF:Q4_K_M",'
    '"source_model":{"sha256":"' + "a" * 64 + '","metadata_artifact_id":"metadata",'
    '"repo":"org/M-GGUF","revision":"' + REV + '","primary_file":"m.gguf",'
    '"files":[{"path":"m.gguf","byte_size":9,"sha256":"' + "a" * 64 + '"}]},'
    '"format":"gguf","layer_count":2,'
    '"artifact_catalog":{"entries":['
    '{"id":"metadata","path":"shared/metadata.gguf","byte_size":1,"sha256":"' + "d" * 64
    + '"},{"id":"publisher-config-json","path":"metadata/config.json","byte_size":2,'
    '"sha256":"' + "b" * 64 + '"}]},'
    '"publisher_metadata":['
    '{"role":"model_config","artifact_id":"publisher-config-json","source_repo":"org/M-GGUF",'
    '"source_revision":"' + REV + '","source_path":"config.json"},'
    '{"role":"tokenizer_config","artifact_id":"publisher-tokenizer-config-json",'
    '"source_repo":"org/M-GGUF","source_revision":"' + REV + '",'
    '"source_path":"tokenizer_config.json"},'
    '{"role":"chat_template","artifact_id":"publisher-chat-template-jinja",'
    '"source_repo":"org/M-GGUF","source_revision":"' + REV + '",'
    '"source_path":"chat_template.jinja"}],'
    '"publisher_defaults":{},'
    '"generation":{"request_defaults":{"selection":{"default":"d"},"profiles":{"d":{'
    '"temperature":0.00001,"top_p":1e-6,"top_k":20,"min_p":0.0,"typical_p":1.5e-7,"seed":7,'
    '"repeat_penalty":1e16,"provenance":{"source_repo":"org/M","revision":"' + REV + '",'
    '"file":"f","section":"s","url":"https://h/' + REV + '"}}}}},'
    '"native_abi_version":"0.1.67","generator_version":"0.79.0","created_at_unix_secs":0}'
)


def test_a_publisher_manifest_hashes_to_its_hand_derived_canonical_bytes() -> None:
    assert canonical_bytes(PUBLISHER_MANIFEST).decode() == PUBLISHER_CANONICAL
    expected = "sha256:" + hashlib.sha256(PUBLISHER_CANONICAL.encode()).hexdigest()
    assert compute_package_id(PUBLISHER_MANIFEST) == expected


def test_publisher_metadata_order_in_the_file_does_not_change_the_id() -> None:
    other = copy.deepcopy(PUBLISHER_MANIFEST)
    other["publisher_metadata"].reverse()
    assert compute_package_id(other) == compute_package_id(PUBLISHER_MANIFEST)


def test_sorting_roles_as_strings_would_give_another_id() -> None:
    """chat_template < model_config as strings, but model_config comes first in the enum."""
    text = canonical_bytes(PUBLISHER_MANIFEST).decode()
    assert text.index('"role":"model_config"') < text.index('"role":"tokenizer_config"') \
        < text.index('"role":"chat_template"')


def test_empty_publisher_defaults_are_kept_and_null_or_absent_ones_are_not() -> None:
    base = copy.deepcopy(PUBLISHER_MANIFEST)
    assert b'"publisher_defaults":{}' in canonical_bytes(base)
    for value in (None, "absent"):
        other = copy.deepcopy(base)
        if value is None:
            other["publisher_defaults"] = None
        else:
            del other["publisher_defaults"]
        assert b"publisher_defaults" not in canonical_bytes(other)
        assert compute_package_id(other) != compute_package_id(base)


def test_typed_publisher_defaults_are_hashed_in_struct_order() -> None:
    other = copy.deepcopy(PUBLISHER_MANIFEST)
    other["publisher_defaults"] = {
        "kv_cache_dtype": {"json_path": "/kv", "artifact_id": "publisher-config-json",
                           "dtype": "fp8"},
        "compute_dtype": {"json_path": "/torch_dtype", "dtype": "bf16",
                          "artifact_id": "publisher-config-json"}}
    assert (b'"publisher_defaults":{"compute_dtype":{"dtype":"bf16","artifact_id":'
            b'"publisher-config-json","json_path":"/torch_dtype"},"kv_cache_dtype":{"dtype":'
            b'"fp8","artifact_id":"publisher-config-json","json_path":"/kv"}},"generation":'
            ) in canonical_bytes(other)


def test_an_empty_publisher_metadata_list_is_skipped() -> None:
    other = copy.deepcopy(PUBLISHER_MANIFEST)
    other["publisher_metadata"] = []
    assert b"publisher_metadata" not in canonical_bytes(other)


def test_generation_without_speculative_decoding_is_hashed_as_an_empty_object() -> None:
    other = copy.deepcopy(MANIFEST)
    other["generation"] = {}
    assert b',"generation":{},"native_abi_version"' in canonical_bytes(other)


def test_an_integer_beyond_f64_or_a_lone_surrogate_never_raises() -> None:
    other = copy.deepcopy(PUBLISHER_MANIFEST)
    other["generation"]["request_defaults"]["profiles"]["d"]["temperature"] = 10**400
    other["model_id"] = "\ud800"
    assert compute_package_id(other).startswith("sha256:")


def test_floats_are_spelled_as_serde_json_spells_them() -> None:
    from meshcert.certify.formats.package_id import serde_f64

    # ryu's choices as mesh-llm-0.79.md §1.6 states them (no Rust golden vector available)
    spelled = {1.0: "1.0", 0.95: "0.95", 1e-5: "0.00001", 1e-6: "1e-6", 1.5e-7: "1.5e-7",
               1e15: "1000000000000000.0", 1e16: "1e16", 2.5e20: "2.5e20", -0.5: "-0.5",
               0.1 + 0.2: "0.30000000000000004", 0.0: "0.0", 100.0: "100.0",
               1.5e-5: "0.000015", 9.99e-6: "9.99e-6", 1.7976931348623157e308:
               "1.7976931348623157e308", 5e-324: "5e-324", 123456.789: "123456.789"}
    assert {x: serde_f64(x) for x in spelled} == spelled
    assert serde_f64(-0.0) == "-0.0"  # a dict key cannot hold both zeros
