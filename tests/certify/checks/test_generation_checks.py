"""Generation defaults (package.md `generation`): each broken policy, threshold or forbidden
field gives its code; the GLM package's declared defaults give none."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.certify.report import CertReport
from meshcert.core.codes import CODES
from tests.certify.checks.manifest_edits import (
    Edit,
    at,
    real_view,
    run_named_checks,
    shapes,
)
from tests.conftest import PackageFactory, certify_dir, codes

# glm_dsa_contract_violation needs the GGUF tensors: it is checked (and tested) elsewhere.
GENERATION_CODES = {c for c, row in CODES.items()
                    if row.group == "generation" and c != "glm_dsa_contract_violation"}
GENERATION_CHECKS = {"generation_fields", "generation_policy", "generation_thresholds",
                     "generation_evidence"}


def policy(name: str, value: Any) -> Edit:
    return at("generation", "policy", name, value=value)


def experimental(name: str, value: Any) -> Edit:
    return at("generation", "policy", "experimental", name, value=value)


def threshold(name: str, value: Any) -> Edit:
    return at("generation", "thresholds", name, value=value)


def certify_glm(packages: PackageFactory, edit: Edit, **options: Any) -> CertReport:
    """Build the GLM package (which declares generation defaults), break it, certify it."""
    info = packages.build("glm")
    packages.edit_manifest(info, edit)
    return certify_dir(info.root, **options)


def messages(report: CertReport, code: str) -> list[str]:
    return [f.message for f in report.findings if f.code == code]


def test_declared_glm_defaults_give_no_generation_finding(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("glm").root)
    assert not codes(report) & (GENERATION_CODES | {"unknown_manifest_field",
                                                    "invalid_manifest_field"})


def test_a_package_without_generation_gives_no_generation_finding(
        packages: PackageFactory) -> None:
    report = certify_dir(packages.build("llama").root)
    assert not codes(report) & GENERATION_CODES


@pytest.mark.parametrize("edit", [
    policy("decode", ""),
    policy("verify", "   "),
    policy("long_prefill", None),  # missing: mesh-llm cannot load a policy without it
    at("generation", "policy", "profile"),
    policy("indexshare", ""),
    experimental("selected_row_flash", ""),
], ids=["blank decode", "blank verify", "null long_prefill", "missing profile",
        "blank indexshare", "blank experimental switch"])
def test_empty_policy_field(packages: PackageFactory, edit: Edit) -> None:
    assert "empty_generation_policy_field" in codes(certify_glm(packages, edit))


def test_unknown_profile_is_a_warning_naming_the_profile(packages: PackageFactory) -> None:
    report = certify_glm(packages, policy("profile", "glm-dsa-v2"))
    [found] = [f for f in report.findings if f.code == "unknown_generation_profile"]
    assert found.severity == "warning"
    assert "generation.policy.profile" in found.message and "glm-dsa-v2" in found.message


@pytest.mark.parametrize("edit", [
    policy("decode", "flash"),
    policy("short_prefill", "Dense"),  # values are exact: never reinterpreted
    policy("verify", 3),
    policy("indexshare", "optional"),
    experimental("moe_weighted_down", "on"),
    experimental("selected_row_flash", True),
], ids=["decode flash", "short_prefill Dense", "verify number", "indexshare optional",
        "experimental on", "experimental boolean"])
def test_unknown_policy_value(packages: PackageFactory, edit: Edit) -> None:
    assert "unknown_generation_policy_value" in codes(certify_glm(packages, edit))


def test_huge_values_are_cut_short_in_messages(packages: PackageFactory) -> None:
    [message] = messages(certify_glm(packages, policy("decode", "x" * 100_000)),
                         "unknown_generation_policy_value")
    assert len(message) < 300


def test_unknown_experimental_switch(packages: PackageFactory) -> None:
    report = certify_glm(packages, experimental("fused_rope", "evidence-gated"))
    [message] = messages(report, "unknown_experimental_policy")
    assert "generation.policy.experimental.fused_rope" in message


@pytest.mark.parametrize(("edit", "location"), [
    (at("generation", "glm_dsa", value={"decode": "compact-flash"}), "generation.glm_dsa"),
    (at("generation", "qwen3", value={}), "generation.qwen3"),
    (policy("deepseek_v3", "dense"), "generation.policy.deepseek_v3"),
    (threshold("llama_max_tokens", 4), "generation.thresholds.llama_max_tokens"),
])
def test_model_family_object(packages: PackageFactory, edit: Edit, location: str) -> None:
    [message] = messages(certify_glm(packages, edit), "model_family_generation_object")
    assert location in message


@pytest.mark.parametrize(("edit", "location"), [
    (at("generation", "metal", value={"nsg": 4, "nr0": 2}), "generation.metal"),
    (at("generation", "cuda", value=True), "generation.cuda"),
    (at("generation", "skippy", value={}), "generation.skippy"),
    (policy("kernel", "mul_mv_id_q3_K"), "generation.policy.kernel"),
    (policy("vulkan_decode", "dense"), "generation.policy.vulkan_decode"),
    (experimental("simdgroupRows", "evidence-gated"),
     "generation.policy.experimental.simdgroupRows"),
    (threshold("nsg", 4), "generation.thresholds.nsg"),
    (threshold("row_height", 8), "generation.thresholds.row_height"),
    (at("generation", "speculative_decoding", "strategies", "mtp", "dispatch", value="fixed"),
     "generation.speculative_decoding.strategies.mtp.dispatch"),
    (at("generation", "cpu_threads", value=8), "generation.cpu_threads"),
])
def test_backend_specific_field(packages: PackageFactory, edit: Edit, location: str) -> None:
    """One finding per forbidden field, however many knobs sit below it."""
    [message] = messages(certify_glm(packages, edit), "backend_specific_generation_field")
    assert location in message


@pytest.mark.parametrize("name", ["short_prefill_max_tokens", "compact_flash_min_kv",
                                  "dense_mask_max_bytes", "direct_sparse_decode_max_top_k"])
def test_zero_threshold(packages: PackageFactory, name: str) -> None:
    [message] = messages(certify_glm(packages, threshold(name, 0)),
                         "invalid_generation_threshold_zero")
    assert f"generation.thresholds.{name}" in message


@pytest.mark.parametrize("value", [-1, 2048.5, 2048.0, "2048", True, [2048], {"tokens": 2048},
                                   2**32], ids=repr)
def test_invalid_threshold(packages: PackageFactory, value: Any) -> None:
    report = certify_glm(packages, threshold("short_prefill_max_tokens", value))
    assert "invalid_generation_threshold" in codes(report)
    assert "invalid_generation_threshold_zero" not in codes(report)


def test_byte_thresholds_may_exceed_32_bits(packages: PackageFactory) -> None:
    report = certify_glm(packages, threshold("dense_mask_max_bytes", 8 * 2**30))
    assert not codes(report) & GENERATION_CODES


@pytest.mark.parametrize(("edit", "location"), [
    (threshold("prefill_chunk_tokens", 128), "generation.thresholds.prefill_chunk_tokens"),
    (at("generation", "sampling", value={"temperature": 0.6}), "generation.sampling"),
    (policy("prefill_order", "auto"), "generation.policy.prefill_order"),
])
def test_unknown_generation_fields_are_info(packages: PackageFactory, edit: Edit,
                                            location: str) -> None:
    report = certify_glm(packages, edit)
    [found] = [f for f in report.findings if f.code == "unknown_manifest_field"]
    assert found.severity == "info" and location in found.message
    assert not codes(report) & GENERATION_CODES


@pytest.mark.parametrize(("edit", "location"), [
    (at("generation", value=["policy"]), "generation"),
    (at("generation", "policy", value="glm-dsa-v1"), "generation.policy"),
    (at("generation", "thresholds", value=[2048]), "generation.thresholds"),
    (at("generation", "policy", "experimental", value="evidence-gated"),
     "generation.policy.experimental"),
])
def test_sections_of_the_wrong_type(packages: PackageFactory, edit: Edit, location: str) -> None:
    [message] = messages(certify_glm(packages, edit), "invalid_manifest_field")
    assert message.startswith(f"{location} must be an object")


# --- evidence: an experimental switch leaves evidence-gated only with a promote verdict ------
def test_switch_without_promote_verdict_is_not_supported_by_evidence(
        packages: PackageFactory) -> None:
    report = certify_glm(packages, experimental("moe_weighted_down", "enabled"),
                         evidence_verdicts={"moe_weighted_down": "keep-evidence-gated"})
    [message] = messages(report, "policy_not_supported_by_evidence")
    assert "moe_weighted_down" in message and "keep-evidence-gated" in message


def test_switch_with_no_verdict_at_all_is_not_supported_by_evidence(
        packages: PackageFactory) -> None:
    report = certify_glm(packages, experimental("selected_row_flash", "enabled"),
                         evidence_verdicts={})
    assert "policy_not_supported_by_evidence" in codes(report)


def test_promote_verdict_supports_the_switch(packages: PackageFactory) -> None:
    report = certify_glm(packages, experimental("selected_row_flash", "enabled"),
                         evidence_verdicts={"selected_row_flash": "promote"})
    assert "policy_not_supported_by_evidence" not in codes(report)
    assert "unknown_generation_policy_value" not in codes(report)
    assert "glm_dsa_contract_violation" not in codes(report)  # promoted: may leave the default


def test_evidence_is_only_consulted_when_supplied(packages: PackageFactory) -> None:
    report = certify_glm(packages, experimental("selected_row_flash", "enabled"))
    assert "policy_not_supported_by_evidence" not in codes(report)


def test_evidence_gated_switches_need_no_verdict(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("glm").root, evidence_verdicts={"decode": "reject"})
    assert not codes(report) & GENERATION_CODES


# --- any JSON shape: a finding or nothing, never a crash -----------------------------------
@pytest.mark.parametrize("value", [[], ["policy"], "glm-dsa-v1", 7, 1.5, True, {}],
                         ids=repr)
def test_generation_of_any_type_never_crashes(packages: PackageFactory, value: Any) -> None:
    report = certify_glm(packages, at("generation", value=value))
    assert "internal_error" not in codes(report)


def test_every_value_of_the_generation_tree_may_be_garbage(packages: PackageFactory) -> None:
    """Each value under `generation` replaced in turn by every JSON type: the generation checks
    give findings or nothing, and never crash."""
    info = packages.build("glm")
    view = real_view(info, evidence_verdicts={"selected_row_flash": "reject"})
    for label, variant in shapes({"generation": info.manifest["generation"]}):
        manifest = {**info.manifest, **variant}
        found = run_named_checks(view, manifest, GENERATION_CHECKS)
        assert "internal_error" not in {f.code for f in found}, label
