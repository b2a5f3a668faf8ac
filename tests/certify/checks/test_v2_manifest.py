"""Package v2 manifest rules that follow mesh-llm's own test suite and fixes: the producer
ABI is provenance only (mesh-llm #1959)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.certify.v2_packages import build_v1, build_v2, edit_manifest
from tests.conftest import certify_dir, codes
from tests.support.splits import SplitPackage


@pytest.fixture
def v2(tmp_path: Path) -> SplitPackage:
    return build_v2(tmp_path)


@pytest.mark.parametrize("producer", ["0.1.57", "0.2.0", "7"])
def test_a_producer_abi_other_than_the_runtimes_passes_with_a_warning(
        v2: SplitPackage, producer: str) -> None:
    edit_manifest(v2, lambda m: m.update(native_abi_version=producer))
    report = certify_dir(v2.root, runtime_abi="0.1.53")
    assert report.status == "passed", [f.message for f in report.findings]
    [found] = [f for f in report.findings if f.code == "native_abi_differs"]
    assert found.severity == "warning"
    assert producer in found.message and "0.1.53" in found.message
    assert "incompatible_skippy_abi_version" not in codes(report)


def test_the_runtimes_own_abi_gives_no_warning(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(native_abi_version="0.1.53"))
    assert "native_abi_differs" not in codes(certify_dir(v2.root, runtime_abi="0.1.53"))


def test_a_bare_producer_abi_is_valid_without_a_runtime(v2: SplitPackage) -> None:
    """mesh-llm's own fixtures carry native_abi_version "7": only non-blank is required."""
    edit_manifest(v2, lambda m: m.update(native_abi_version="7"))
    report = certify_dir(v2.root)
    assert report.status == "passed"
    assert not {"native_abi_differs", "incompatible_skippy_abi_version"} & codes(report)


def test_a_malformed_runtime_abi_cannot_be_compared_and_warns(v2: SplitPackage) -> None:
    report = certify_dir(v2.root, runtime_abi="latest")
    [found] = [f for f in report.findings if f.code == "native_abi_differs"]
    assert "cannot be compared" in found.message and report.status == "passed"


def test_a_blank_producer_abi_is_still_a_missing_value(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(native_abi_version="  "))
    report = certify_dir(v2.root, runtime_abi="0.1.53")
    assert "missing_value" in codes(report) and report.status == "failed"


def test_v1_keeps_its_skippy_abi_rule(tmp_path: Path) -> None:
    """v1: a higher minor than the runtime's is refused (and native_abi_differs is v2 only)."""
    pkg = build_v1(tmp_path)
    edit_manifest(pkg, lambda m: m.update(skippy_abi_version="0.2.0"))
    report = certify_dir(pkg.root, runtime_abi="0.1.53")
    assert "incompatible_skippy_abi_version" in codes(report)
    assert "native_abi_differs" not in codes(report) and report.status == "failed"


# --- generation.request_defaults: released in mesh-llm v0.78.1 (mesh-llm-0.79.md §1.5, §3.3) ---
REQUEST_DEFAULTS = {
    "selection": {"default": "chat"},
    "profiles": {"chat": {"temperature": 0.7, "top_p": 0.8, "top_k": 20,
                          "provenance": {"source_repo": "org/model", "revision": "a" * 40,
                                         "file": "README.md", "section": "Best practices",
                                         "url": "https://example.org/" + "a" * 40}}},
}


def _with_request_defaults(pkg: SplitPackage, package_id: str | None = None) -> None:
    """Add request_defaults; re-identified as mesh-llm does unless an id is given."""
    def edit(m: dict[str, Any]) -> None:
        m.setdefault("generation", {})["request_defaults"] = REQUEST_DEFAULTS
        if package_id is not None:
            m["package_id"] = package_id

    edit_manifest(pkg, edit, reid=package_id is None)


def test_request_defaults_are_accepted_not_an_unreleased_extension(v2: SplitPackage) -> None:
    _with_request_defaults(v2)
    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    assert not {"unreleased_manifest_extension", "package_identity_mismatch",
                "check_not_run"} & codes(report)


def test_an_id_that_leaves_request_defaults_out_is_now_a_mismatch(v2: SplitPackage) -> None:
    from meshcert.certify.formats.package_id import compute_package_id

    _with_request_defaults(v2, package_id=compute_package_id(v2.manifest))  # without them
    report = certify_dir(v2.root)
    assert "package_identity_mismatch" in codes(report) and report.status == "failed"


@pytest.mark.parametrize("key", ["publisher_metadata", "publisher_defaults"])
def test_publisher_root_keys_are_known_fields(v2: SplitPackage, key: str) -> None:
    edit_manifest(v2, lambda m: m.update({key: [] if key == "publisher_metadata" else {}}))
    report = certify_dir(v2.root)
    assert report.status == "passed", [f.message for f in report.findings]
    assert not {"unreleased_manifest_extension", "unknown_manifest_field"} & codes(report)


def test_a_null_sidecars_list_is_refused_as_serde_does(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(sidecars=None))
    assert "invalid_manifest_field" in codes(certify_dir(v2.root))


@pytest.mark.parametrize(("path", "value"), [
    (("source_model", "sha256"), "a" * 64 + "\n"),
    (("artifact_catalog", "entries", 0, "id"), "metadata\n"),
])
def test_a_trailing_newline_does_not_slip_past_a_pattern(v2: SplitPackage,
                                                          path: tuple[Any, ...],
                                                          value: str) -> None:
    def edit(m: dict[str, Any]) -> None:
        target: Any = m
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value

    edit_manifest(v2, edit)
    assert {"invalid_digest", "invalid_identifier"} & codes(certify_dir(v2.root))


def test_without_request_defaults_a_stale_id_is_still_a_mismatch(v2: SplitPackage) -> None:
    edit_manifest(v2, lambda m: m.update(model_id="someone/else"), reid=False)
    assert "package_identity_mismatch" in codes(certify_dir(v2.root))
