"""native_mtp_layer_missing_tensors: a native-mtp proposer or strategy names a layer whose
fragment has no blk.N.nextn.* tensors (the GLM package's MTP head lives in its last layer)."""

from __future__ import annotations

from typing import Any

from meshcert.certify.report import CertReport
from tests.conftest import PackageFactory, certify_dir, codes
from tests.core.gguf.ggufbuild import drop_tensors, layer_rel

CODE = "native_mtp_layer_missing_tensors"


def mtp_findings(report: CertReport) -> list[Any]:
    return [f for f in report.findings if f.code == CODE]


def test_good_glm_package_has_its_mtp_tensors(packages: PackageFactory) -> None:
    info = packages.build("glm")
    assert info.manifest["generation"]["speculative_decoding"]["proposers"]["mtp-head"][
        "layer_indices"] == [3]
    assert CODE not in codes(certify_dir(info.root))


def test_nextn_tensors_dropped_from_the_named_layer(packages: PackageFactory) -> None:
    info = packages.build("glm")
    drop_tensors(info, layer_rel(3), keep=lambda name: ".nextn." not in name)
    report = certify_dir(info.root)
    [found] = mtp_findings(report)
    assert found.layer_index == 3 and found.path == layer_rel(3)
    assert "proposers.mtp-head" in found.message and "blk.3.nextn.*" in found.message
    assert report.status == "failed"


def test_proposer_naming_a_layer_without_nextn(packages: PackageFactory) -> None:
    info = packages.build("glm")
    packages.edit_manifest(info, lambda m: m["generation"]["speculative_decoding"]["proposers"][
        "mtp-head"].update(layer_indices=[1, 3]))
    [found] = mtp_findings(certify_dir(info.root))
    assert found.layer_index == 1


def test_strategy_with_its_own_layer_indices(packages: PackageFactory) -> None:
    info = packages.build("glm")

    def inline(m: dict[str, Any]) -> None:
        strategy = m["generation"]["speculative_decoding"]["strategies"]["mtp"]
        strategy.pop("proposer")
        strategy.update(prediction_depth=1, layer_indices=[0])

    packages.edit_manifest(info, inline)
    [found] = mtp_findings(certify_dir(info.root))
    assert found.layer_index == 0 and "strategies.mtp" in found.message


def test_nextn_tensors_of_another_layer_do_not_count(packages: PackageFactory) -> None:
    info = packages.build("glm")
    packages.edit_manifest(info, lambda m: m["generation"]["speculative_decoding"]["proposers"][
        "mtp-head"].update(layer_indices=[2]))
    [found] = mtp_findings(certify_dir(info.root))
    assert found.layer_index == 2


def test_out_of_range_and_missing_layers_are_left_to_other_checks(
        packages: PackageFactory) -> None:
    info = packages.build("glm")
    packages.edit_manifest(info, lambda m: m["generation"]["speculative_decoding"]["proposers"][
        "mtp-head"].update(layer_indices=[3, 99]))
    (info.root / layer_rel(3)).unlink()
    report = certify_dir(info.root)
    assert mtp_findings(report) == []
    assert "missing_artifact" in codes(report)


def test_llama_package_declaring_native_mtp(packages: PackageFactory) -> None:
    generation = {"speculative_decoding": {
        "default": "mtp",
        "proposers": {"head": {"type": "native-mtp", "prediction_depth": 1,
                               "layer_indices": [0]}},
        "strategies": {"mtp": {"type": "native-mtp", "proposer": "head"}}}}
    info = packages.build("llama", generation=generation)
    [found] = mtp_findings(certify_dir(info.root))
    assert found.layer_index == 0 and found.path == layer_rel(0)
