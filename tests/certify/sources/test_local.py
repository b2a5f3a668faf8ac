"""The local loader reads the headers before it hashes, and says so to `on_headers`: the
service asks its worker processes then, so they answer while the bytes are hashed."""

from __future__ import annotations

from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from tests.conftest import PackageFactory


def test_on_headers_sees_every_header_and_no_digest_yet(packages: PackageFactory) -> None:
    info = packages.build(layers=2)
    seen: dict[str, object] = {}

    def on_headers(view: PackageView) -> None:
        seen["headers"] = sorted(view.headers)
        seen["digests"] = [f.sha256 for f in view.files.values() if f.sha256]

    view = load_local_package(str(info.root), display_ref="x",
                              options=CertOptions(verify_sha256=True), on_headers=on_headers)
    assert seen["headers"] == sorted(view.headers) and len(view.headers) >= 4
    assert seen["digests"] == []
    assert all(f.sha256 for f in view.files.values() if f.kind == "file")


def test_without_hashing_the_files_are_only_stated(packages: PackageFactory) -> None:
    info = packages.build(layers=2)
    view = load_local_package(str(info.root), display_ref="x",
                              options=CertOptions(verify_sha256=False))
    assert view.files and not any(f.sha256 for f in view.files.values())


def test_on_files_names_the_ggufs_whose_headers_are_then_read(packages: PackageFactory
                                                               ) -> None:
    """The service asks llama.cpp's parser about these paths before the headers are read, so
    they must be exactly the headers the loader reads, in the same order."""
    info = packages.build(layers=2)
    seen: dict[str, object] = {}

    def on_files(view: PackageView, paths: list[str]) -> None:
        seen["paths"], seen["headers"] = list(paths), dict(view.headers)

    view = load_local_package(str(info.root), display_ref="x",
                              options=CertOptions(verify_sha256=True), on_files=on_files)
    assert seen["headers"] == {}  # asked before any header was read
    assert seen["paths"] == list(view.headers) and len(view.headers) >= 4
