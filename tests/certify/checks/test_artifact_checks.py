"""Artifacts: safe paths, declared fields, and the files behind them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from meshcert.certify.paths import unsafe_path_reason
from tests.conftest import PackageFactory, certify_dir, codes


@pytest.mark.parametrize("path", [
    "../outside.gguf", "/etc/passwd", "layers/../../x.gguf", "./layers/a.gguf", "layers//a.gguf",
    "C:/models/a.gguf", "c:evil.gguf", "layers\\a.gguf", "\\\\server\\share\\a.gguf", "", 7,
    "layers/a.gguf/", "a\x00b.gguf",
])
def test_unsafe_paths_are_rejected(path: object) -> None:
    assert unsafe_path_reason(path) is not None


@pytest.mark.parametrize("path", ["layers/layer-00000.gguf", "shared/metadata.gguf", "a..b.gguf"])
def test_normal_paths_are_safe(path: str) -> None:
    assert unsafe_path_reason(path) is None


def test_unsafe_path_in_manifest_is_a_finding_and_never_opened(packages: PackageFactory,
                                                              tmp_path: Path) -> None:
    secret = tmp_path / "secret.gguf"
    secret.write_bytes(b"GGUF secret")
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"][0].update(path="../secret.gguf"))
    report = certify_dir(info.root)
    assert "unsafe_artifact_path" in codes(report)
    assert "missing_artifact" not in codes(report)


def _edit_layer(key: str, value: Any):
    def edit(m: dict[str, Any]) -> None:
        m["layers"][1][key] = value
    return edit


@pytest.mark.parametrize(("edit", "code"), [
    (_edit_layer("artifact_bytes", 0), "empty_artifact"),
    (_edit_layer("tensor_bytes", 0), "invalid_tensor_bytes"),
    (_edit_layer("sha256", "g" * 64), "invalid_artifact_sha256"),
    (_edit_layer("sha256", "ab" * 16), "invalid_artifact_sha256"),
    (_edit_layer("artifact_bytes", 123), "artifact_size_mismatch"),
    (_edit_layer("sha256", "0" * 64), "artifact_sha256_mismatch"),
    (_edit_layer("path", "layers/nowhere.gguf"), "missing_artifact"),
    (_edit_layer("path", "layers/layer-000.gguf"), "duplicate_artifact_path"),
])
def test_artifact_entry_problems(packages: PackageFactory, edit, code: str) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, edit)
    report = certify_dir(info.root)
    hit = next(f for f in report.findings if f.code == code)
    assert hit.severity == "error" and report.status == "failed"


def test_metadata_with_tensors_but_zero_bytes_is_invalid(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["shared"]["metadata"].update(tensor_count=2))
    assert "invalid_tensor_bytes" in codes(certify_dir(info.root))


def test_sha256_is_compared_case_insensitively(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"][0].update(sha256=m["layers"][0]["sha256"]
                                                                 .upper()))
    assert certify_dir(info.root).status == "passed"


def test_tampered_byte_of_same_size_is_caught(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / "layers" / "layer-002.gguf"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    report = certify_dir(info.root)
    hit = next(f for f in report.findings if f.code == "artifact_sha256_mismatch")
    assert hit.path == "layers/layer-002.gguf" and hit.layer_index == 2


def test_no_verify_sha256_skips_hashing_but_keeps_sizes(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / "layers" / "layer-002.gguf"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0xFF
    target.write_bytes(bytes(data))
    report = certify_dir(info.root, verify_sha256=False)
    assert "artifact_sha256_mismatch" not in codes(report)
    assert report.verification == "size-only"
    packages.edit_manifest(info, _edit_layer("artifact_bytes", 5))
    assert "artifact_size_mismatch" in codes(certify_dir(info.root, verify_sha256=False))


def test_directory_instead_of_file(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / "layers" / "layer-001.gguf"
    target.unlink()
    target.mkdir()
    assert "artifact_not_file" in codes(certify_dir(info.root))


def test_symlink_leaving_the_package(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    target = info.root / "layers" / "layer-001.gguf"
    outside = tmp_path / "elsewhere.gguf"
    outside.write_bytes(target.read_bytes())
    target.unlink()
    target.symlink_to(outside)
    report = certify_dir(info.root)
    hit = next(f for f in report.findings if f.code == "artifact_not_file")
    assert "outside the package" in hit.message


def test_symlink_inside_the_package_is_fine(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / "layers" / "layer-001.gguf"
    (info.root / "blobs").mkdir()
    real = info.root / "blobs" / "l1"
    target.rename(real)
    target.symlink_to(real)
    assert "artifact_not_file" not in codes(certify_dir(info.root))


def test_fifo_is_not_a_file(packages: PackageFactory) -> None:
    info = packages.build("llama")
    target = info.root / "layers" / "layer-001.gguf"
    target.unlink()
    os.mkfifo(target)
    report = certify_dir(info.root)  # must not block reading the FIFO
    assert "artifact_not_file" in codes(report)


def test_hard_link_is_flagged(packages: PackageFactory, tmp_path: Path) -> None:
    info = packages.build("llama")
    os.link(info.root / "layers" / "layer-001.gguf", tmp_path / "shared-storage.gguf")
    report = certify_dir(info.root)
    assert "artifact_hard_link" in codes(report)
    assert report.status == "passed"  # a warning, not an error


def test_unreadable_file_is_a_finding(packages: PackageFactory) -> None:
    """Root reads any file, so the read failure is injected into the view the check sees."""
    from dataclasses import replace

    from meshcert.certify.checks.artifacts import artifact_files
    from meshcert.certify.sources.local import load_local_package
    from meshcert.certify.view import CertOptions

    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    path = "layers/layer-001.gguf"
    view.files[path] = replace(view.files[path], sha256=None,
                               sha256_error="PermissionError: Permission denied")
    found = list(artifact_files(view))
    assert [f.code for f in found] == ["artifact_sha256_unreadable"]
    assert "Permission denied" in found[0].message


def test_undeclared_gguf_is_a_warning(packages: PackageFactory) -> None:
    info = packages.build("llama")
    (info.root / "layers" / "layer-00099.gguf").write_bytes(b"GGUF")
    report = certify_dir(info.root)
    hit = next(f for f in report.findings if f.code == "undeclared_artifact")
    assert hit.severity == "warning" and hit.path == "layers/layer-00099.gguf"
    assert report.status == "passed"
