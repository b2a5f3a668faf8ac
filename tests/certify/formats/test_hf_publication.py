"""mesh-llm's HF publication gate (mesh-llm-0.79.md §6.1), rule by rule. No mesh-llm output
exists for these manifests: each vector is derived by hand from the rule it names."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from meshcert.certify.formats.hf_publication import (
    ARTIFACT_ROSTER,
    BYTE_BOUND,
    COORDINATE,
    MAX_MANIFEST_BYTES,
    REVISION,
    SOURCE_IDENTITY,
    SOURCE_SUMMARY,
    publication_refusals,
)

COMMIT = "5f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c"
GOOD: dict[str, Any] = {
    "schema_version": 2,
    "source_model": {"repo": "org/Repo-GGUF", "revision": COMMIT, "sha256": "ab" * 32,
                     "primary_file": "Repo-Q4_K_M.gguf"},
    "artifact_catalog": {"entries": [
        {"id": "metadata", "path": "shared/metadata.gguf", "byte_size": 10},
        {"id": "layer-00000", "path": "layers/layer-00000.gguf", "byte_size": 20}]},
}


def rules(manifest: Any, **kwargs: Any) -> list[str]:
    return [r.rule for r in publication_refusals(manifest, **kwargs)]


def edited(edit: Any) -> dict[str, Any]:
    manifest = copy.deepcopy(GOOD)
    edit(manifest)
    return manifest


def test_a_pinned_package_passes() -> None:
    assert publication_refusals(GOOD, manifest_bytes=4096) == []


@pytest.mark.parametrize("revision,why", [
    (COMMIT.upper(), "upper-case hex (the format accepts it, the job does not)"),
    ("main", "not a 40-hex commit"),
    (COMMIT[:39], "not a 40-hex commit"),
    (COMMIT + "0", "not a 40-hex commit"),
])
def test_a_revision_that_is_not_40_lower_case_hex_is_refused(revision: str, why: str) -> None:
    [refusal] = publication_refusals(edited(lambda m: m["source_model"].update(
        revision=revision)))
    assert refusal.rule == REVISION and why in refusal.detail


@pytest.mark.parametrize("field", ["repo", "revision"])
def test_a_missing_source_repo_or_revision_is_refused(field: str) -> None:
    [refusal] = publication_refusals(edited(lambda m: m["source_model"].pop(field)))
    assert refusal.rule == SOURCE_IDENTITY and f"source_model.{field} is absent" in refusal.detail


def test_a_source_other_than_the_resolved_one_is_refused() -> None:
    found = publication_refusals(GOOD, resolved_repo="org/Other",
                                 resolved_revision="0" * 40)
    assert [r.rule for r in found] == [SOURCE_IDENTITY, SOURCE_IDENTITY]
    assert "'org/Other'" in found[0].detail and "'0000" in found[1].detail


@pytest.mark.parametrize("repo", ["noslash", "a/b/c", "./x", "org/..", "org/" + "x" * 129,
                                  "org/na me"])
def test_a_repo_that_is_not_an_hf_coordinate_is_refused(repo: str) -> None:
    assert rules(edited(lambda m: m["source_model"].update(repo=repo))) == [COORDINATE]


def test_the_byte_bound_is_8_mib_inclusive() -> None:
    assert rules(GOOD, manifest_bytes=MAX_MANIFEST_BYTES) == []
    [refusal] = publication_refusals(GOOD, manifest_bytes=MAX_MANIFEST_BYTES + 1)
    assert refusal.rule == BYTE_BOUND and "8,388,609 bytes" in refusal.detail


@pytest.mark.parametrize("entry,says", [
    ({"id": "x", "path": "layers/x.gguf", "byte_size": 0}, "1 artifact(s) of 0 bytes"),
    ({"id": "x", "path": "layers/layer-00000.gguf", "byte_size": 5}, "more than once"),
    ({"id": "x", "path": "model-package.json", "byte_size": 5}, "model-package.json named"),
    ({"id": "x", "path": "README.md", "byte_size": 5}, "README.md named"),
])
def test_the_artifact_roster_rules(entry: dict[str, Any], says: str) -> None:
    [refusal] = publication_refusals(edited(
        lambda m: m["artifact_catalog"]["entries"].append(entry)))
    assert refusal.rule == ARTIFACT_ROSTER and says in refusal.detail


@pytest.mark.parametrize("source,says", [
    ({"canonical_ref": ""}, "non-empty"),
    ({"canonical_ref": "x" * 4097}, "4,097 characters"),
    ({"primary_file": "a\nb.gguf"}, "control character"),
])
def test_the_source_summary_identity(source: dict[str, Any], says: str) -> None:
    manifest = edited(lambda m: m["source_model"].update(source))
    [refusal] = publication_refusals(manifest)
    assert refusal.rule == SOURCE_SUMMARY and says in refusal.detail


@pytest.mark.parametrize("manifest", [None, [], {"source_model": "x"},
                                      {"source_model": {}, "artifact_catalog": {"entries": 3}},
                                      {"artifact_catalog": {"entries": [1, None, {}]}}])
def test_bad_input_gives_refusals_never_an_exception(manifest: Any) -> None:
    found = publication_refusals(manifest)
    assert {r.rule for r in found} <= {SOURCE_IDENTITY, SOURCE_SUMMARY, ARTIFACT_ROSTER}
    assert all(r.message for r in found)
