"""Strict manifest parsing: every malformed input is a finding, never a traceback."""

from __future__ import annotations

import pytest

from meshcert.certify.manifest_parse import MAX_MANIFEST_BYTES, parse_manifest
from tests.conftest import PackageFactory, certify_dir, codes


@pytest.mark.parametrize(("raw", "code"), [
    (None, "missing_manifest"),
    (b"{not json", "invalid_manifest_json"),
    (b'{"a": NaN}', "invalid_manifest_json"),
    (b'{"a": Infinity}', "invalid_manifest_json"),
    (b"\xff\xfe{}", "invalid_manifest_json"),
    (b"[1, 2]", "invalid_manifest_json"),
    (b"[" * 100_000 + b"]" * 100_000, "invalid_manifest_json"),
    (b'{"a": 1' + b"0" * 5000 + b"}", "invalid_manifest_json"),
    (b" " * (MAX_MANIFEST_BYTES + 1), "manifest_too_large"),
])
def test_bad_manifest_bytes(raw: bytes | None, code: str) -> None:
    parsed = parse_manifest(raw)
    assert parsed.data is None
    assert [f.code for f in parsed.findings] == [code]


def test_duplicate_keys_are_each_reported_and_parsing_continues() -> None:
    parsed = parse_manifest(b'{"a": 1, "a": 2, "b": {"c": 1, "c": 1}}')
    assert parsed.data == {"a": 2, "b": {"c": 1}}
    assert [f.code for f in parsed.findings] == ["duplicate_manifest_key"] * 2


def test_utf8_bom_is_accepted() -> None:
    assert parse_manifest(b'\xef\xbb\xbf{"x": 1}').data == {"x": 1}


def test_missing_manifest_fails_the_package(packages: PackageFactory) -> None:
    info = packages.build("llama")
    (info.root / "model-package.json").unlink()
    report = certify_dir(info.root)
    assert codes(report) == {"missing_manifest"} and report.status == "failed"


def test_oversized_manifest_on_disk_is_refused_without_loading(packages: PackageFactory) -> None:
    info = packages.build("llama")
    with open(info.root / "model-package.json", "wb") as handle:
        handle.truncate(MAX_MANIFEST_BYTES + 10)
    report = certify_dir(info.root)
    assert "manifest_too_large" in codes(report) and report.status == "failed"


def test_duplicate_key_in_real_manifest(packages: PackageFactory) -> None:
    info = packages.build("llama")
    text = (info.root / "model-package.json").read_text()
    packages.write_manifest_text(info, text.replace('"format"', '"format": "x", "format"', 1))
    report = certify_dir(info.root)
    assert "duplicate_manifest_key" in codes(report) and report.status == "failed"


def test_manifest_linking_out_of_the_package_is_not_read(packages: PackageFactory,
                                                        tmp_path) -> None:
    info = packages.build("llama")
    outside = tmp_path / "elsewhere.json"
    (info.root / "model-package.json").rename(outside)
    (info.root / "model-package.json").symlink_to(outside)
    report = certify_dir(info.root)
    assert codes(report) >= {"artifact_not_file"} and report.status == "failed"
    assert report.manifest_sha256 is None  # nothing was read through the link


def test_readme_linking_out_of_the_package_is_not_read(packages: PackageFactory,
                                                      tmp_path) -> None:
    info = packages.build("llama")
    outside = tmp_path / "README.md"
    (info.root / "README.md").rename(outside)
    (info.root / "README.md").symlink_to(outside)
    assert "readme_missing" in codes(certify_dir(info.root))
