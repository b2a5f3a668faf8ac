"""What a node applies from a v2 package (mesh-llm-0.79.md §2.3 'Runtime use'): the package's
KV declaration, else its compute dtype; only q8_0/q4_0 change the live cache. Vectors derived
by hand from that rule."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.certify.node_defaults import node_defaults


def manifest(defaults: dict[str, str] | None = None, **extra: Any) -> dict[str, Any]:
    decl = {slot: {"dtype": dtype, "artifact_id": "publisher-config-json", "json_path": "/x"}
            for slot, dtype in (defaults or {}).items()}
    return {"schema_version": 2, "publisher_defaults": decl, **extra}


@pytest.mark.parametrize(("defaults", "kv", "origin"), [
    ({}, "f16", "runtime_default"),
    ({"compute_dtype": "bf16"}, "f16", "compute_dtype"),
    ({"compute_dtype": "q4_0"}, "q4_0", "compute_dtype"),
    ({"compute_dtype": "bf16", "kv_cache_dtype": "q8_0"}, "q8_0", "kv_cache_dtype"),
    ({"compute_dtype": "q8_0", "kv_cache_dtype": "fp8_e4m3"}, "f16", "kv_cache_dtype"),
    ({"kv_cache_dtype": "f32"}, "f16", "kv_cache_dtype"),
])
def test_kv_cache_type_a_node_applies(defaults: dict[str, str], kv: str, origin: str) -> None:
    node = node_defaults(manifest(defaults))
    assert node is not None
    assert (node.kv_cache_type, node.kv_cache_from) == (kv, origin)
    assert node.declared_kv_cache_dtype == defaults.get("kv_cache_dtype")
    assert node.declared_compute_dtype == defaults.get("compute_dtype")


def test_request_profiles_with_their_selection_roles_and_fields() -> None:
    provenance = {"source_repo": "org/m", "revision": "a" * 40, "file": "README.md",
                  "section": "Usage", "url": f"https://huggingface.co/org/m/blob/{'a' * 40}"}
    generation = {"request_defaults": {
        "selection": {"default": "thinking", "reasoning_enabled": "thinking",
                      "reasoning_disabled": "direct"},
        "profiles": {
            "thinking": {"temperature": 0.6, "top_p": 0.95, "provenance": provenance},
            "direct": {"temperature": 0.7, "reasoning": {"enabled": "off", "budget": 0},
                       "sampler_sequence": "k" * 5000, "provenance": provenance}}}}
    node = node_defaults(manifest(generation=generation))
    assert node is not None
    by_name = {p.name: p for p in node.request_profiles}
    assert [p.name for p in node.request_profiles] == ["direct", "thinking"]  # byte order
    assert by_name["thinking"].selection == ["default", "reasoning_enabled"]
    assert by_name["direct"].selection == ["reasoning_disabled"]
    assert by_name["thinking"].fields == {"temperature": 0.6, "top_p": 0.95,
                                          "provenance": provenance}
    assert by_name["direct"].fields["reasoning"] == {"enabled": "off", "budget": 0}
    assert by_name["direct"].fields["sampler_sequence"].endswith("... (5000 chars)")


def test_an_infinite_value_is_reported_as_text() -> None:
    generation = {"request_defaults": {"selection": {"default": "p"},
                                       "profiles": {"p": {"temperature": float("inf")}}}}
    node = node_defaults(manifest(generation=generation))
    assert node is not None and node.request_profiles[0].fields == {"temperature": "inf"}


def test_v1_has_none() -> None:
    assert node_defaults({"schema_version": 1}) is None
