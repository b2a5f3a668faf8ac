"""The catalog entry a publish writes: new entries, updates that keep everything else, old
list-shaped entries, and the package reference pinned to its commit."""

from __future__ import annotations

import json
from typing import Any

import pytest

from meshcert.publish.catalog import (
    CatalogError,
    entry_bytes,
    entry_path,
    source_of,
    updated_entry,
    variant_key,
)

COMMIT = "0123456789abcdef0123456789abcdef01234567"
MANIFEST: dict[str, Any] = {
    "schema_version": 2, "model_id": "org/Model-GGUF:Q4_K_M", "layer_count": 2,
    "source_model": {"repo": "org/Model-GGUF", "revision": "f" * 40,
                     "primary_file": "Model-Q4_K_M-00001-of-00002.gguf"},
    "artifact_catalog": {"entries": [
        {"id": "metadata", "path": "shared/metadata.gguf", "byte_size": 100, "sha256": "a" * 64},
        {"id": "layer-00000", "path": "layers/layer-00000.gguf", "byte_size": 900,
         "sha256": "b" * 64}]},
}


def test_a_new_entry_pins_the_package() -> None:
    entry = updated_entry(None, MANIFEST, target="meshllm/model-layers", commit=COMMIT,
                          experimental=False)
    source = source_of(MANIFEST)
    assert source is not None and entry_path(source) == "entries/org/Model-GGUF.json"
    assert entry["schema_version"] == 1 and entry["source_repo"] == "org/Model-GGUF"
    variant = entry["variants"]["Model-Q4_K_M"]  # the stem, without -NNNNN-of-NNNNN
    assert variant["source"] == {"repo": "org/Model-GGUF",
                                 "file": "Model-Q4_K_M-00001-of-00002.gguf",
                                 "revision": "f" * 40}
    assert variant["packages"] == [{"type": "layer-package", "repo": "meshllm/model-layers",
                                    "revision": COMMIT, "layer_count": 2, "total_bytes": 1000,
                                    "source_revision": "f" * 40}]
    assert json.loads(entry_bytes(entry)) == entry


def test_an_update_replaces_only_this_package_and_keeps_the_rest() -> None:
    existing = {"schema_version": 1, "source_repo": "org/Model-GGUF", "notes": "kept",
                "variants": {"Model-Q4_K_M": {
                    "source": {"repo": "org/Model-GGUF"}, "curated": {"name": "Curated name"},
                    "packages": [{"type": "layer-package", "repo": "meshllm/model-layers"},
                                 {"type": "layer-package", "repo": "other/layers"}]},
                    "Model-Q8_0": {"packages": []}}}
    entry = updated_entry(json.dumps(existing).encode(), MANIFEST,
                          target="meshllm/model-layers", commit=COMMIT, experimental=False)
    variant = entry["variants"]["Model-Q4_K_M"]
    assert variant["curated"] == {"name": "Curated name"}
    assert [(p["repo"], p.get("revision")) for p in variant["packages"]] == [
        ("other/layers", None), ("meshllm/model-layers", COMMIT)]
    assert entry["notes"] == "kept" and "Model-Q8_0" in entry["variants"]


def test_list_shaped_variants_stay_a_list() -> None:
    existing = {"schema_version": 1, "variants": [
        {"source": {"repo": "org/Model-GGUF", "file": "Model-Q4_K_M-00001-of-00002.gguf"},
         "packages": []}]}
    entry = updated_entry(json.dumps(existing).encode(), MANIFEST, target="meshllm/x",
                          commit=COMMIT, experimental=True)
    assert len(entry["variants"]) == 1
    assert entry["variants"][0]["packages"][0]["revision"] == COMMIT
    fresh = updated_entry(json.dumps({"variants": []}).encode(), MANIFEST, target="meshllm/x",
                          commit=COMMIT, experimental=True)
    assert fresh["variants"][0]["curated"]["draft"] is True


@pytest.mark.parametrize("existing", [b"{not json", b"[1, 2]", b'{"variants": 3}'])
def test_an_entry_that_is_not_one_is_never_overwritten(existing: bytes) -> None:
    with pytest.raises(CatalogError):
        updated_entry(existing, MANIFEST, target="meshllm/x", commit=COMMIT,
                      experimental=False)


def test_a_manifest_without_a_source_repo_has_no_entry() -> None:
    bare = {**MANIFEST, "source_model": {"sha256": "c" * 64}}
    assert source_of(bare) is None
    with pytest.raises(CatalogError):
        updated_entry(None, bare, target="meshllm/x", commit=COMMIT, experimental=False)


def test_variant_key_without_a_file_is_the_model_id() -> None:
    source = source_of({**MANIFEST, "source_model": {"repo": "org/Model-GGUF"}})
    assert source is not None and variant_key(source, "org/Model:Q4") == "org/Model:Q4"
