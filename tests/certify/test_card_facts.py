"""The facts a model card states, read back and compared with hand-made manifests (the values
are invented; the shapes are mesh-llm-0.79.md §1.2-1.5's): what contradicts, and what is only
missing or unstated (mesh-llm's own card says "not recorded" for v2 fields)."""

from __future__ import annotations

from typing import Any

from meshcert.certify.card_facts import (
    contradictions,
    declares_defaults,
    publisher_files,
    stated_facts,
    typed_defaults,
)

REV = "0123456789abcdef0123456789abcdef01234567"


def manifest(**extra: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "schema_version": 2, "package_id": "sha256:" + "ab" * 32, "model_id": "org/m-GGUF:Q4",
        "source_model": {"repo": "org/m", "revision": REV, "sha256": "cd" * 32},
        "format": "gguf", "layer_count": 30,
        "artifact_catalog": {"entries": [
            {"id": "metadata", "path": "shared/metadata.gguf", "byte_size": 10,
             "sha256": "01" * 32},
            {"id": "publisher-config-json", "path": "metadata/config.json", "byte_size": 20,
             "sha256": "02" * 32}]},
        "publisher_metadata": [{"role": "model_config", "artifact_id": "publisher-config-json",
                                "source_repo": "org/m", "source_revision": REV,
                                "source_path": "config.json"}]}
    return base | extra


PROFILES = {"request_defaults": {"selection": {"default": "balanced"}, "profiles": {
    "balanced": {"temperature": 0.7, "provenance": {
        "source_repo": "org/m", "revision": REV, "file": "generation_config.json",
        "section": "generation_config", "url": f"https://huggingface.co/org/m/blob/{REV}/x"}}}}}
DEFAULTS = {"compute_dtype": {"dtype": "bf16", "artifact_id": "publisher-config-json",
                              "json_path": "/torch_dtype"}}


def said(m: dict[str, Any], card: str) -> list[tuple[str, str, str]]:
    return [(c.label, c.stated, c.expected) for c in contradictions(m, card)]


def test_labels_are_read_from_tables_and_lists() -> None:
    card = "| **Layer count** | 30 |\n- Model id: `org/m-GGUF:Q4`\n| Package id | x |\n"
    assert stated_facts(card) == {"layer count": ["30"], "model id": ["`org/m-GGUF:Q4`"],
                                  "package id": ["x"]}


def test_ids_and_layer_count_stated_otherwise_contradict() -> None:
    card = ("| **Model id** | `org/other` |\n| **Package id** | `sha256:" + "ef" * 32 + "` |\n"
            "| **Layer count** | 1,024 layers |\n")
    assert [c[0] for c in said(manifest(), card)] == ["Model id", "Package id", "Layer count"]


def test_the_right_values_do_not() -> None:
    card = ("| **Model id** | `org/m-GGUF:Q4` |\n| **Package id** | `sha256:" + "ab" * 32 + "` |\n"
            "- Layer count: 30\n")
    assert said(manifest(), card) == []


def test_unstated_values_are_missing_not_wrong() -> None:
    """mesh-llm's card for a v2 package says "not recorded" where it reads v1 fields only."""
    card = "| **Model id** | not recorded |\n| **Layer count** | not recorded |\n"
    assert said(manifest(), card) == []


def test_none_declared_contradicts_declared_profiles_and_typed_defaults() -> None:
    m = manifest(generation=PROFILES, publisher_defaults=DEFAULTS)
    assert declares_defaults(m)
    [(label, stated, expected)] = said(m, "- Generation defaults: none declared\n")
    assert label == "Generation defaults" and stated == "none declared"
    assert expected == "compute dtype bf16; request profiles balanced"


def test_none_declared_is_true_of_a_manifest_without_defaults() -> None:
    assert not declares_defaults(manifest())
    assert said(manifest(), "- Generation defaults: none declared\n") == []


def test_default_profile_and_dtypes_are_compared() -> None:
    m = manifest(generation=PROFILES, publisher_defaults=DEFAULTS)
    card = ("| **Default request profile** | `creative` |\n| **Compute dtype** | `f16` |\n"
            "| **KV cache dtype** | `q8_0` |\n")
    assert said(m, card) == [
        ("Default request profile", "`creative`", "balanced"),
        ("Compute dtype", "`f16`", "bf16"),
        ("KV cache dtype", "`q8_0`", "not declared")]
    right = ("| **Default request profile** | `balanced` |\n| **Compute dtype** | `bf16` (from "
             "x) |\n| **KV cache dtype** | not declared |\n")
    assert said(m, right) == []


def test_a_declared_dtype_the_card_calls_undeclared_contradicts() -> None:
    m = manifest(publisher_defaults=DEFAULTS)
    assert said(m, "| **Compute dtype** | not declared |\n") == [
        ("Compute dtype", "not declared", "bf16")]


def test_publisher_files_and_typed_defaults_name_their_artifacts() -> None:
    m = manifest(publisher_defaults=DEFAULTS)
    [f] = publisher_files(m)
    assert (f.role, f.path, f.source, f.size) == ("model_config", "metadata/config.json",
                                                  f"config.json at org/m@{REV}", 20)
    [d] = typed_defaults(m)
    assert (d.label, d.dtype, d.origin) == ("Compute dtype", "bf16",
                                            "metadata/config.json /torch_dtype")


def test_malformed_manifests_are_read_without_raising() -> None:
    bad = {"schema_version": 2, "model_id": 7, "layer_count": "30", "publisher_metadata": "x",
           "publisher_defaults": [], "generation": {"request_defaults": {"profiles": 3}}}
    assert publisher_files(bad) == [] and typed_defaults(bad) == []
    # a value the manifest checks already refuse is not compared
    assert said(bad, "- Model id: a\n- Layer count: 3\n") == []


def test_a_profile_named_where_none_is_declared_contradicts() -> None:
    assert said(manifest(), "- Default request profile: `balanced`\n") == [
        ("Default request profile", "`balanced`", "none declared")]
