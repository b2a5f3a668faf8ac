"""Manifest rules: each broken field gives its code; a good package gives none."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import PackageFactory, certify_dir, codes


def _set(key: str, value: Any):
    def edit(m: dict[str, Any]) -> None:
        m[key] = value
    return edit


def _drop(key: str):
    def edit(m: dict[str, Any]) -> None:
        m.pop(key, None)
    return edit


def _source(key: str, value: Any):
    def edit(m: dict[str, Any]) -> None:
        m["source_model"][key] = value
    return edit


def test_good_packages_pass_with_no_error_or_warning(packages: PackageFactory) -> None:
    for kind in ("llama", "glm"):
        report = certify_dir(packages.build(kind).root)
        assert report.status == "passed", [f.code for f in report.findings]
        assert report.package_gate.status == "passed"
        assert not [f for f in report.findings if f.severity != "info"]


@pytest.mark.parametrize(("edit", "code"), [
    (_set("schema_version", 3), "unsupported_schema_version"),
    (_set("schema_version", "1"), "unsupported_schema_version"),
    (_set("schema_version", "2"), "unsupported_schema_version"),
    (_drop("schema_version"), "unsupported_schema_version"),
    (_set("format", "gguf-split"), "invalid_format"),
    (_set("model_id", "  "), "empty_model_id"),
    (_drop("model_id"), "empty_model_id"),
    (_drop("activation_width"), "missing_activation_width"),
    (_set("activation_width", 0), "invalid_activation_width"),
    (_set("activation_width", "64"), "invalid_activation_width"),
    (_source("path", ""), "empty_source_model_path"),
    (_source("sha256", "abc"), "invalid_source_model_sha256"),
    (_source("revision", " "), "empty_source_identity_field"),
    (_source("canonical_ref", ""), "empty_source_identity_field"),
    (_drop("skippy_abi_version"), "missing_skippy_abi_version"),
    (_set("skippy_abi_version", "one.two"), "incompatible_skippy_abi_version"),
    (_set("layer_count", 1), "too_few_layers"),
    (_set("layer_count", "4"), "invalid_manifest_field"),
    (_drop("source_model"), "missing_manifest_field"),
    (_drop("created_at_unix_secs"), "missing_created_at"),
    (_set("model_id", "/home/me/models/glm"), "model_id_not_coordinate"),
])
def test_broken_manifest_field_gives_its_code(packages: PackageFactory, edit, code: str) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, edit)
    report = certify_dir(info.root)
    assert code in codes(report)
    finding = next(f for f in report.findings if f.code == code)
    assert finding.remediation and finding.message
    if finding.severity == "error":
        assert report.status == "failed"


def test_source_file_entries_are_checked(packages: PackageFactory) -> None:
    info = packages.build("llama")

    def edit(m: dict[str, Any]) -> None:
        m["source_model"]["files"] = [{"path": "", "size_bytes": -1, "sha256": "zz"}]
    packages.edit_manifest(info, edit)
    found = codes(certify_dir(info.root))
    assert {"empty_source_model_path", "invalid_source_model_sha256",
            "invalid_manifest_field"} <= found


def test_missing_shared_entries_are_named(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["shared"].pop("output"))
    report = certify_dir(info.root)
    missing = [f for f in report.findings if f.code == "missing_shared_artifact"]
    assert len(missing) == 1 and "shared.output" in missing[0].message


def test_unknown_fields_are_tolerated_as_info(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, _set("future_field", {"x": 1}))
    report = certify_dir(info.root)
    notes = [f for f in report.findings if f.code == "unknown_manifest_field"]
    assert notes and notes[0].severity == "info" and "future_field" in notes[0].message
    assert report.status == "passed"


@pytest.mark.parametrize(("package_abi", "runtime_abi", "ok"), [
    ("0.1.0", "0.1.5", True),
    ("0.1", "0.2.0", True),
    ("0.2.0", "0.1.9", False),
    ("1.0.0", "0.9.0", False),
    ("1.0.0", "1.0.0", True),
])
def test_abi_against_runtime(packages: PackageFactory, package_abi: str, runtime_abi: str,
                             ok: bool) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, _set("skippy_abi_version", package_abi))
    found = codes(certify_dir(info.root, runtime_abi=runtime_abi))
    assert ("incompatible_skippy_abi_version" not in found) is ok
    assert "skippy_abi_not_checked" not in found


def test_abi_not_checked_is_said_without_runtime(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("llama").root)
    note = next(f for f in report.findings if f.code == "skippy_abi_not_checked")
    assert note.severity == "info"


@pytest.mark.parametrize(("kind", "code"), [("", "empty_projector_kind"),
                                            ("clip", "unsupported_projector_kind")])
def test_projector_kinds(packages: PackageFactory, kind: str, code: str) -> None:
    info = packages.build("llama")
    meta = dict(info.manifest["shared"]["metadata"])

    def edit(m: dict[str, Any]) -> None:
        m["projectors"] = [{**meta, "kind": kind}]
    packages.edit_manifest(info, edit)
    assert code in codes(certify_dir(info.root))


def test_every_problem_is_reported_not_just_the_first(packages: PackageFactory) -> None:
    info = packages.build("llama")

    def edit(m: dict[str, Any]) -> None:
        m["format"] = "x"
        m["model_id"] = ""
        m["layers"][1]["sha256"] = "nothex"
        m["layers"].append(dict(m["layers"][0]))
    packages.edit_manifest(info, edit)
    found = codes(certify_dir(info.root))
    assert {"invalid_format", "empty_model_id", "invalid_artifact_sha256",
            "duplicate_layer"} <= found
