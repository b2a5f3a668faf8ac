"""publisher_metadata and publisher_defaults read and validated as mesh-llm v0.77+ does
(mesh-llm-0.79.md §1.2-1.3, §1.7): one case per rule with mesh-llm's code and path; closed
enums, unknown fields and nulls as serde reads them; in a real package, publisher files are
size/SHA-256 artifacts, never GGUFs, never payload parts."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.checks.v2_publisher import (
    validate_publisher_defaults,
    validate_publisher_metadata,
)
from meshcert.certify.formats.v2_layout import payload_entries, v2_artifact_entries
from tests.certify.v2_packages import (
    PINNED_REVISION,
    add_publisher_files,
    build_v2,
    edit_manifest,
    tiny_config_json,
)
from tests.conftest import certify_dir, codes
from tests.support.splits import SplitPackage

REV = "0123456789abcdefABCDEF0123456789abcdef01"
ENTRY = {"role": "model_config", "artifact_id": "publisher-config-json",
         "source_repo": "org/M-GGUF", "source_revision": REV, "source_path": "config.json"}
QUANT = {"role": "hf_quant_config", "artifact_id": "publisher-hf-quant-config-json",
         "source_repo": "org/M-GGUF", "source_revision": REV,
         "source_path": "hf_quant_config.json"}
TOKENIZER = {"role": "tokenizer_config", "artifact_id": "publisher-tokenizer-config-json",
             "source_repo": "org/M-GGUF", "source_revision": REV,
             "source_path": "tokenizer_config.json"}
MANIFEST: dict[str, Any] = {
    "source_model": {"repo": "org/M-GGUF", "revision": REV},
    "artifact_catalog": {"entries": [
        {"id": e["artifact_id"], "path": f"metadata/{e['source_path']}"}
        for e in (ENTRY, QUANT, TOKENIZER)]},
    "publisher_metadata": [ENTRY, QUANT, TOKENIZER],
    "publisher_defaults": {
        "compute_dtype": {"dtype": "bf16", "artifact_id": "publisher-config-json",
                          "json_path": "/torch_dtype"},
        "kv_cache_dtype": {"dtype": "fp8", "artifact_id": "publisher-hf-quant-config-json",
                           "json_path": "/kv_cache_quant_algo"}},
}


def edited(edit: Callable[[dict[str, Any]], Any]) -> dict[str, Any]:
    manifest = copy.deepcopy(MANIFEST)
    edit(manifest)
    return manifest


def problems(manifest: dict[str, Any]) -> set[tuple[str, str]]:
    found = validate_publisher_metadata(manifest) + validate_publisher_defaults(manifest)
    return {(code, path) for code, path, _ in found}


def entry(i: int, **changes: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda m: m["publisher_metadata"][i].update(changes)


def slot(name: str, **changes: Any) -> Callable[[dict[str, Any]], Any]:
    return lambda m: m["publisher_defaults"][name].update(changes)


def test_the_writers_shape_is_accepted_with_upper_case_revisions() -> None:
    assert problems(MANIFEST) == set()


PM = "publisher_metadata[0]"
PT = "publisher_metadata[2]"  # the tokenizer_config entry: no typed default is bound to it


def source(**changes: Any) -> Callable[[dict[str, Any]], Any]:
    """The same source identity change in source_model and in every entry."""
    def edit(m: dict[str, Any]) -> None:
        m["source_model"].update({k.removeprefix("source_"): v for k, v in changes.items()})
        for item in m["publisher_metadata"]:
            item.update(changes)
    return edit


def each(code: str, suffix: str) -> set[tuple[str, str]]:
    return {(code, f"publisher_metadata[{i}].{suffix}") for i in range(3)}


METADATA_RULES: list[tuple[Callable[[dict[str, Any]], Any], set[tuple[str, str]]]] = [
    (lambda m: m["publisher_metadata"].append(dict(ENTRY, artifact_id="publisher-hf-quant-"
                                                   "config-json")),
     {("duplicate_sidecar", "publisher_metadata[3]")}),
    (entry(2, artifact_id="ghost"), {("unknown_artifact", f"{PT}.artifact_id")}),
    (source(source_repo=" "), each("missing_value", "source_repo")),
    (source(source_revision=""), each("missing_value", "source_revision")
     | each("source_identity_mismatch", "source_revision")),
    (source(source_revision="main"), each("source_identity_mismatch", "source_revision")),
    (source(source_revision="g" * 40), each("source_identity_mismatch", "source_revision")),
    (source(source_revision=REV + "0"), each("source_identity_mismatch", "source_revision")),
    (entry(0, source_path="../config.json"), {("invalid_path", f"{PM}.source_path")}),
    (entry(0, source_path="/config.json"), {("invalid_path", f"{PM}.source_path")}),
    (entry(0, source_path="a//config.json"), {("invalid_path", f"{PM}.source_path")}),
    (entry(0, source_repo="someone/else"), {("source_identity_mismatch", f"{PM}.source_repo")}),
    (lambda m: m["source_model"].pop("repo"), each("source_identity_mismatch", "source_repo")),
    (lambda m: m["source_model"].update(revision=None),
     each("source_identity_mismatch", "source_revision")),
    (entry(0, source_revision=REV.lower()),  # a case change is another revision string
     {("source_identity_mismatch", f"{PM}.source_revision")}),
]


@pytest.mark.parametrize(("edit", "expected"), METADATA_RULES)
def test_each_publisher_metadata_rule_gives_mesh_llms_code(
        edit: Callable[[dict[str, Any]], Any], expected: set[tuple[str, str]]) -> None:
    assert problems(edited(edit)) == expected


PD = "publisher_defaults"
DEFAULTS_RULES: list[tuple[Callable[[dict[str, Any]], Any], set[tuple[str, str]]]] = [
    (lambda m: (slot("compute_dtype", artifact_id="ghost")(m)),
     {("unknown_artifact", f"{PD}.compute_dtype.artifact_id"),
      ("source_identity_mismatch", f"{PD}.compute_dtype.artifact_id")}),
    (lambda m: (m["artifact_catalog"]["entries"].append({"id": "notes", "path": "n.json"}),
                slot("compute_dtype", artifact_id="notes")(m)),
     {("source_identity_mismatch", f"{PD}.compute_dtype.artifact_id")}),  # not bound
    (slot("compute_dtype", artifact_id="publisher-hf-quant-config-json"),
     {("source_identity_mismatch", f"{PD}.compute_dtype.artifact_id")}),  # role
    (slot("kv_cache_dtype", artifact_id="publisher-tokenizer-config-json"),
     {("source_identity_mismatch", f"{PD}.kv_cache_dtype.artifact_id")}),
    (slot("kv_cache_dtype", json_path="  "), {("missing_value", f"{PD}.kv_cache_dtype.json_path")}),
]


@pytest.mark.parametrize(("edit", "expected"), DEFAULTS_RULES)
def test_each_publisher_defaults_rule_gives_mesh_llms_code(
        edit: Callable[[dict[str, Any]], Any], expected: set[tuple[str, str]]) -> None:
    assert problems(edited(edit)) == expected


def test_kv_cache_dtype_may_come_from_config_json() -> None:
    assert problems(edited(slot("kv_cache_dtype", artifact_id="publisher-config-json"))) == set()


SHAPES: list[tuple[Callable[[dict[str, Any]], Any], tuple[str, str]]] = [
    (lambda m: m.update(publisher_metadata=None), ("invalid_manifest_field", "publisher_metadata")),
    (lambda m: m.update(publisher_metadata={}), ("invalid_manifest_field", "publisher_metadata")),
    (lambda m: m["publisher_metadata"].append("x"),
     ("invalid_manifest_field", "publisher_metadata[3]")),
    (entry(0, role="config"), ("invalid_manifest_field", f"{PM}.role")),
    (entry(0, role="ModelConfig"), ("invalid_manifest_field", f"{PM}.role")),
    (entry(0, note="hi"), ("unknown_manifest_field", f"{PM}.note")),
    (lambda m: m["publisher_metadata"][0].pop("source_path"),
     ("missing_value", f"{PM}.source_path")),
    (entry(0, artifact_id=None), ("missing_value", f"{PM}.artifact_id")),
    (entry(0, source_repo=7), ("invalid_manifest_field", f"{PM}.source_repo")),
    (lambda m: m.update(publisher_defaults=[]), ("invalid_manifest_field", PD)),
    (lambda m: m["publisher_defaults"].update(param_dtype={}),
     ("unknown_manifest_field", f"{PD}.param_dtype")),
    (slot("compute_dtype", dtype="float16"),
     ("invalid_manifest_field", f"{PD}.compute_dtype.dtype")),
    (slot("compute_dtype", dtype="BF16"), ("invalid_manifest_field", f"{PD}.compute_dtype.dtype")),
    (slot("compute_dtype", scale=1), ("unknown_manifest_field", f"{PD}.compute_dtype.scale")),
    (lambda m: m["publisher_defaults"]["compute_dtype"].pop("json_path"),
     ("missing_value", f"{PD}.compute_dtype.json_path")),
    (lambda m: m["publisher_defaults"].update(compute_dtype="bf16"),
     ("invalid_manifest_field", f"{PD}.compute_dtype")),
]


@pytest.mark.parametrize(("edit", "expected"), SHAPES)
def test_what_serde_refuses_at_parse_is_a_finding(
        edit: Callable[[dict[str, Any]], Any], expected: tuple[str, str]) -> None:
    assert expected in problems(edited(edit))


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f32", "fp8", "fp8_e4m3", "fp8_e5m2", "q8_0",
                                   "q4_0"])
def test_every_dtype_of_the_closed_enum_is_accepted(dtype: str) -> None:
    assert problems(edited(slot("kv_cache_dtype", dtype=dtype))) == set()


def test_null_and_empty_publisher_defaults_are_valid() -> None:
    """An Option: null is absent; {} is what the writer writes for a config.json without a
    mappable dtype; a null slot is absent too."""
    assert problems(edited(lambda m: m.update(publisher_defaults=None))) == set()
    assert problems(edited(lambda m: m.update(publisher_defaults={}))) == set()
    assert problems(edited(lambda m: m["publisher_defaults"].update(compute_dtype=None))) == set()
    assert problems(edited(lambda m: m.update(publisher_metadata=[],
                                              publisher_defaults={}))) == set()


@pytest.mark.parametrize("junk", [None, [], "x", 3, {"": {}}, [[]], [{"role": []}]])
def test_any_shape_never_raises(junk: Any) -> None:
    for key in ("publisher_metadata", "publisher_defaults", "source_model", "artifact_catalog"):
        manifest = copy.deepcopy(MANIFEST)
        manifest[key] = copy.deepcopy(junk)
        problems(manifest)  # no exception


# --- in a real package -------------------------------------------------------------------
CHAT_TEMPLATE = b"{% for m in messages %}{{ m['content'] }}{% endfor %}"


@pytest.fixture
def v2(tmp_path: Path) -> SplitPackage:
    return build_v2(tmp_path)


def _config() -> bytes:
    return json.dumps(tiny_config_json(), indent=2).encode()


def test_publisher_files_are_size_and_sha_artifacts_not_payload_parts(v2: SplitPackage) -> None:
    add_publisher_files(v2, {"config.json": _config(), "chat_template.jinja": CHAT_TEMPLATE})
    entries = v2_artifact_entries(v2.manifest)
    roles = {e.path: e.role for e in entries}
    assert roles["metadata/config.json"] == roles["metadata/chat_template.jinja"] == "publisher"
    assert all(e.role != "publisher" for e in payload_entries(entries))
    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    assert not {"invalid_metadata_carrier", "mesh_certify_would_fail", "gguf_bad_magic",
                "undeclared_artifact", "unreleased_manifest_extension"} & codes(report)


def test_a_changed_publisher_file_fails_its_sha256(v2: SplitPackage) -> None:
    add_publisher_files(v2, {"config.json": _config()})
    (v2.root / "metadata/config.json").write_bytes(_config().replace(b"64", b"65"))
    report = certify_dir(v2.root)
    assert "artifact_sha256_mismatch" in codes(report) and report.status == "failed"


def test_a_publisher_file_named_like_a_gguf_is_still_not_read_as_one(v2: SplitPackage) -> None:
    """The role comes from publisher_metadata, not the name: no GGUF check opens it."""
    add_publisher_files(v2, {"config.json": _config()})

    def rename(m: dict[str, Any]) -> None:
        for e in m["artifact_catalog"]["entries"]:
            if e["id"] == "publisher-config-json":
                e["path"] = "metadata/config.gguf"

    (v2.root / "metadata/config.json").rename(v2.root / "metadata/config.gguf")
    edit_manifest(v2, rename)
    found = codes(certify_dir(v2.root))
    assert not {f for f in found if f.startswith("gguf_")}
    assert "undeclared_artifact" not in found


def test_an_artifact_under_metadata_that_publisher_metadata_does_not_name_is_a_part(
        v2: SplitPackage) -> None:
    """mesh-llm excludes publisher artifacts by id (package_carrier.rs): an unbound
    metadata/ file counts as a payload part, so part_count no longer matches."""
    data = _config()
    (v2.root / "metadata").mkdir()
    (v2.root / "metadata/config.json").write_bytes(data)
    import hashlib

    edit_manifest(v2, lambda m: m["artifact_catalog"]["entries"].append(
        {"id": "publisher-config-json", "path": "metadata/config.json", "byte_size": len(data),
         "sha256": hashlib.sha256(data).hexdigest()}))
    assert "invalid_metadata_carrier" in codes(certify_dir(v2.root))


def test_a_bad_publisher_entry_in_a_package_names_its_json_path(v2: SplitPackage) -> None:
    add_publisher_files(v2, {"config.json": _config()})
    edit_manifest(v2, lambda m: m["publisher_metadata"][0].update(source_repo="other/repo"))
    report = certify_dir(v2.root)
    [found] = [f for f in report.findings if f.code == "source_identity_mismatch"]
    assert found.message.startswith("publisher_metadata[0].source_repo: ")
    assert found.path == "model-package.json" and report.status == "failed"


def test_a_null_publisher_metadata_fails_but_null_defaults_pass(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(publisher_defaults=None))
    assert certify_dir(v2.root).status == "passed"
    edit_manifest(v2, lambda m: m.update(publisher_metadata=None))
    report = certify_dir(v2.root)
    assert "invalid_manifest_field" in codes(report) and report.status == "failed"


def test_the_helper_pins_an_upper_case_revision() -> None:
    assert PINNED_REVISION.lower() != PINNED_REVISION and len(PINNED_REVISION) == 40
