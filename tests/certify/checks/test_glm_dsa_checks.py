"""glm_dsa_contract_violation: profile glm-dsa-v1 on an artifact without what it needs."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.certify.report import CertReport
from meshcert.testing import glm_dsa_spec
from meshcert.testing.writer import default_generation
from tests.conftest import PackageFactory, certify_dir, codes
from tests.core.gguf.ggufbuild import GGUFFile, drop_tensors, layer_rel, rewrite

CODE = "glm_dsa_contract_violation"


def violations(report: CertReport) -> list[str]:
    return [f.message for f in report.findings if f.code == CODE]


def test_good_glm_package_honours_the_profile(packages: PackageFactory) -> None:
    info = packages.build("glm")
    assert info.manifest["generation"]["policy"]["profile"] == "glm-dsa-v1"
    assert violations(certify_dir(info.root)) == []


def test_llama_artifact_declaring_glm_dsa_v1(packages: PackageFactory) -> None:
    info = packages.build("llama", generation=default_generation(glm_dsa_spec()))
    report = certify_dir(info.root)
    messages = " | ".join(violations(report))
    assert "'llama', the profile requires 'glm-dsa'" in messages
    for needed in ("attn_k_b", "attn_v_b", "attn_kv_a_mqa", "ffn_up_exps", "ffn_gate_shexp",
                   "indexer.k_norm", "glm-dsa.attention.indexer.top_k"):
        assert needed in messages, needed
    assert report.status == "failed"


@pytest.mark.parametrize("section,key,value", [
    ("policy", "decode", "dense"),
    ("policy", "indexshare", "optional"),
    ("thresholds", "dense_mask_max_bytes", 1024),
    ("thresholds", "short_prefill_max_tokens", "2048"),
])
def test_policy_or_threshold_contradicting_the_profile(packages: PackageFactory, section: str,
                                                      key: str, value: Any) -> None:
    info = packages.build("glm")
    packages.edit_manifest(info, lambda m: m["generation"][section].update({key: value}))
    [message] = violations(certify_dir(info.root))
    assert f"generation.{section}.{key} is {value!r}" in message


def test_experimental_switch_contradicting_the_profile(packages: PackageFactory) -> None:
    info = packages.build("glm")
    packages.edit_manifest(info, lambda m: m["generation"]["policy"]["experimental"].update(
        moe_weighted_down="enabled"))
    [message] = violations(certify_dir(info.root))
    assert "experimental.moe_weighted_down is 'enabled'" in message


def test_values_left_out_are_implied_by_the_profile(packages: PackageFactory) -> None:
    def trim(m: dict[str, Any]) -> None:
        m["generation"]["policy"] = {"profile": "glm-dsa-v1"}
        del m["generation"]["thresholds"]

    info = packages.build("glm")
    packages.edit_manifest(info, trim)
    assert violations(certify_dir(info.root)) == []


def test_other_profiles_are_not_this_checks_business(packages: PackageFactory) -> None:
    info = packages.build("llama", generation={"policy": {"profile": "some-other-v1"}})
    assert CODE not in codes(certify_dir(info.root))


def test_missing_indexer_metadata_key(packages: PackageFactory) -> None:
    info = packages.build("glm")

    def drop_key(f: GGUFFile) -> None:
        f.kvs = [kv for kv in f.kvs if kv.key != "glm-dsa.attention.indexer.top_k"]

    rewrite(info, "shared/metadata.gguf", drop_key)
    [message] = violations(certify_dir(info.root))
    assert "glm-dsa.attention.indexer.top_k" in message and "head_count" not in message


@pytest.mark.parametrize("component,group", [
    ("ffn_down_shexp", "shared expert"),
    ("ffn_gate_exps", "routed expert"),
    ("indexer.proj", "indexer"),
])
def test_tensor_group_missing_from_every_layer(packages: PackageFactory, component: str,
                                               group: str) -> None:
    info = packages.build("glm")
    for i in range(4):
        drop_tensors(info, layer_rel(i), keep=lambda n: f".{component}." not in n)
    [message] = violations(certify_dir(info.root))
    assert f"{group} tensor(s) {component}" in message


def test_indexer_tensors_may_be_shared_by_some_layers(packages: PackageFactory) -> None:
    """IndexShare: layers may reuse another layer's indexer, so only its total absence counts."""
    info = packages.build("glm")
    drop_tensors(info, layer_rel(1), keep=lambda n: ".indexer." not in n)
    assert violations(certify_dir(info.root)) == []


def test_split_attention_missing_from_one_layer(packages: PackageFactory) -> None:
    info = packages.build("glm")
    drop_tensors(info, layer_rel(2), keep=lambda n: "attn_v_b" not in n)
    [message] = violations(certify_dir(info.root))
    assert "attn_v_b is missing from layer(s) 2" in message


def test_declared_nextn_layers_without_nextn_tensors(packages: PackageFactory) -> None:
    info = packages.build("glm", generation={"policy": {"profile": "glm-dsa-v1"}})
    drop_tensors(info, layer_rel(3), keep=lambda n: ".nextn." not in n)
    [message] = violations(certify_dir(info.root))
    assert "nextn_predict_layers is 1" in message and "layer 3" in message
