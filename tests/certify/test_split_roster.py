"""The split-serving roster meshcert ships (meshcert/certify/data/split-certified.json, read from
Mesh-LLM/mesh-llm skippy/crates/skippy-api/src/split-certified.json @b51ef30e; the recipe and
count are those mesh-llm-0.79.md §3.4 gives)."""

from __future__ import annotations

import pytest

from meshcert.certify.split_roster import RosterError, bundled_roster, roster_from_json


def test_the_bundled_roster_is_mesh_llms_newest() -> None:
    roster = bundled_roster()
    assert len(roster.architectures) == 84
    assert roster.native_recipe == {
        "llama_upstream_sha": "8212c7802455255460ab8e18fc34754560031b34",
        "skippy_abi": "0.1.67",
        "patch_queue_sha256": "ecee78dbe2287e991866fb927a720a1bcf690eabc33348d9f7830479ac91d4ce"}
    assert {"afmoe", "step35", "llama", "qwen3", "qwen3moe", "qwen35", "glm4moe", "deepseek2",
            "deepseek4", "gemma4", "inkling", "nemotron_h_moe"} <= roster.architectures
    assert not roster.certifies("glm-dsa")
    assert roster.partial is False and roster.retrieved == "2026-12-02"
    assert roster.commit == "b51ef30ef9016addc1dee2f2f991f8f1d16c5fb3"


@pytest.mark.parametrize("document", [
    [], {"schema_version": 1, "native_recipe": {}, "architectures": []},
    {"schema_version": 2, "native_recipe": {"skippy_abi": "0.1.67"}, "architectures": []},
    {"schema_version": 2, "native_recipe": {"llama_upstream_sha": "a", "skippy_abi": "b",
                                            "patch_queue_sha256": "c"}, "architectures": [1]},
])
def test_a_roster_not_in_mesh_llms_shape_is_refused(document: object) -> None:
    with pytest.raises(RosterError):
        roster_from_json(document)


def test_the_bundled_roster_knows_both_0_1_67_recipes_and_uses_the_newest() -> None:
    """§6.4: the two 0.1.67 recipes differ in their llama.cpp pin (8212c780 @b51ef30e,
    5e03bdd8 @0007b7bd, most likely the later) and patch-queue hash; same architectures."""
    roster = bundled_roster()
    pins = [(r.commit, r.values["llama_upstream_sha"]) for r in roster.recipes]
    assert pins == [("0007b7bd", "5e03bdd8700948b9c41c54dd1b00f28a2aebc03f"),
                    ("b51ef30ef9016addc1dee2f2f991f8f1d16c5fb3",
                     "8212c7802455255460ab8e18fc34754560031b34")]
    assert roster.recipe is roster.recipes[0]
    assert roster.recipe.values["patch_queue_sha256"] is None  # not read: left out, not guessed
    assert "patch_queue_sha256" not in roster.recipe.known
    assert roster.recipe.label == "mesh-llm @0007b7bd (skippy ABI 0.1.67, llama.cpp 5e03bdd8)"


def test_a_roster_without_recipes_uses_its_own() -> None:
    recipe = {"llama_upstream_sha": "a" * 40, "skippy_abi": "0.1.57",
              "patch_queue_sha256": "b" * 64}
    roster = roster_from_json({"schema_version": 2, "native_recipe": recipe,
                               "architectures": ["llama"], "meshcert": {"commit": "c" * 40}})
    assert roster.recipes == () and roster.recipe.known == recipe
    assert roster.recipe.label == "mesh-llm @cccccccc (skippy ABI 0.1.57, llama.cpp aaaaaaaa)"


@pytest.mark.parametrize("recipes", [
    "x", [1], [{}], [{"skippy_abi": 3}],
    [{"skippy_abi": "0.1.67", "newest": True}, {"skippy_abi": "0.1.66", "newest": True}],
])
def test_a_recipe_list_not_in_shape_is_refused(recipes: object) -> None:
    recipe = {"llama_upstream_sha": "a", "skippy_abi": "b", "patch_queue_sha256": "c"}
    with pytest.raises(RosterError):
        roster_from_json({"schema_version": 2, "native_recipe": recipe, "architectures": [],
                          "meshcert": {"recipes": recipes}})
