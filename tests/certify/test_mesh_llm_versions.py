"""The oldest mesh-llm release per manifest feature (mesh-llm-0.79.md §4), derived by hand from
the spec's table (no mesh-llm value exists for it)."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.certify.mesh_llm_versions import is_older, minimum_mesh_llm, parse_version

BASE: dict[str, Any] = {"schema_version": 2}


@pytest.mark.parametrize(("manifest", "version"), [
    (BASE, "0.76.0"),
    (BASE | {"publisher_metadata": []}, "0.77.0"),  # an unknown key to v0.76.x, even empty
    (BASE | {"publisher_defaults": {}}, "0.77.0"),
    (BASE | {"generation": {}}, "0.76.0"),
    (BASE | {"generation": {"speculative_decoding": {}}}, "0.76.0"),
    (BASE | {"generation": {"request_defaults": None}}, "0.78.1"),
    (BASE | {"publisher_metadata": [], "generation": {"request_defaults": {}}}, "0.78.1"),
])
def test_minimum_release(manifest: dict[str, Any], version: str) -> None:
    need = minimum_mesh_llm(manifest)
    assert need is not None and need.version == version


def test_v1_has_no_minimum() -> None:
    assert minimum_mesh_llm({"schema_version": 1}) is None
    assert minimum_mesh_llm(None) is None


def test_versions_compare_numerically() -> None:
    assert parse_version("v0.77") == (0, 77, 0)
    assert parse_version("0.78.x") is None
    assert is_older("0.9.0", "0.77.0") and not is_older("0.78.1", "0.78.1")
