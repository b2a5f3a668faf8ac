"""layers[]: one entry per index, none out of range, none duplicated."""

from __future__ import annotations

from tests.conftest import PackageFactory, certify_dir, codes


def test_missing_layer_names_the_index(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"].pop(2))
    report = certify_dir(info.root)
    missing = [f for f in report.findings if f.code == "missing_layer"]
    assert [f.layer_index for f in missing] == [2]
    assert report.status == "failed"


def test_duplicate_layer(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"][1].update(layer_index=0))
    found = codes(certify_dir(info.root))
    assert {"duplicate_layer", "missing_layer"} <= found


def test_layer_index_out_of_range(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"][3].update(layer_index=9))
    report = certify_dir(info.root)
    bad = next(f for f in report.findings if f.code == "layer_index_out_of_range")
    assert bad.layer_index == 9


def test_negative_layer_index_is_out_of_range(packages: PackageFactory) -> None:
    info = packages.build("llama")
    packages.edit_manifest(info, lambda m: m["layers"][0].update(layer_index=-1))
    assert "layer_index_out_of_range" in codes(certify_dir(info.root))
