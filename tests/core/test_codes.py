"""The finding-code table is a public contract: every code the spec names exists, with the
severity the spec gives it, and every catalogued code is exercised by some test."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.attest.codes import ATTESTATION_CODES as _ATTESTATION_CODES
from meshcert.catalog.compare import CATALOG_RUN_CODES
from meshcert.certify.checks import all_checks
from meshcert.certify.merge import MERGE_CODES
from meshcert.core.codes import CODES, Severity

# Copied from the spec (certification.md, "Finding codes"): a rename here is a breaking change.
SPEC_CODES = [
    "activation_width_mismatch",
    "architecture_mismatch",
    "artifact_not_file",
    "artifact_sha256_mismatch",
    "artifact_sha256_unreadable",
    "artifact_size_mismatch",
    "backend_specific_generation_field",
    "direct_gguf_input",
    "duplicate_layer",
    "duplicate_manifest_key",
    "empty_artifact",
    "empty_generation_policy_field",
    "empty_model_id",
    "empty_projector_kind",
    "empty_source_identity_field",
    "empty_source_model_path",
    "empty_speculative_default",
    "empty_speculative_proposer_name",
    "empty_speculative_strategy_name",
    "empty_speculative_strategy_type",
    "empty_window_policy_default",
    "gguf_bad_magic",
    "gguf_duplicate_key",
    "gguf_duplicate_tensor",
    "gguf_misaligned_tensor",
    "gguf_tensor_out_of_bounds",
    "gguf_tensor_overlap",
    "gguf_truncated",
    "gguf_unsupported_version",
    "glm_dsa_contract_violation",
    "hub_artifact_missing",
    "hub_artifact_not_lfs",
    "hub_gated",
    "hub_repo_not_found",
    "hub_revision_not_found",
    "hub_sha256_mismatch",
    "hub_size_mismatch",
    "hub_unreachable",
    "incompatible_skippy_abi_version",
    "invalid_activation_width",
    "invalid_artifact_sha256",
    "invalid_composite_extender_type",
    "invalid_composite_primary_type",
    "invalid_extension_policy_tokens",
    "invalid_format",
    "invalid_generation_threshold",
    "invalid_generation_threshold_zero",
    "invalid_manifest_json",
    "invalid_ngram_cache_history_scope",
    "invalid_ngram_proposer_max_tokens",
    "invalid_ngram_proposer_window",
    "invalid_ngram_suffix_history_scope",
    "invalid_package_ref",
    "invalid_source_model_sha256",
    "invalid_tensor_bytes",
    "invalid_window_policy_bounds",
    "invalid_window_policy_initial",
    "invalid_window_policy_pipeline_depth",
    "invalid_window_policy_zero",
    "layer_count_mismatch",
    "layer_index_out_of_range",
    "manifest_too_large",
    "metadata_has_tensors",
    "missing_activation_width",
    "missing_artifact",
    "missing_composite_extender",
    "missing_composite_extension_policy",
    "missing_composite_primary",
    "missing_layer",
    "missing_manifest",
    "missing_native_mtp_layers",
    "missing_ngram_strategy_proposer",
    "missing_required_tensor",
    "missing_skippy_abi_version",
    "missing_speculative_default_strategy",
    "missing_speculative_proposer",
    "model_family_generation_object",
    "native_mtp_layer_missing_tensors",
    "native_mtp_layer_out_of_range",
    "native_mtp_strategy_proposer_type_mismatch",
    "ngram_strategy_proposer_type_mismatch",
    "package_tensor_not_in_source",
    "policy_not_supported_by_evidence",
    "readme_missing",
    "readme_missing_field",
    "source_sha256_mismatch",
    "source_tensor_data_mismatch",
    "source_tensor_missing_from_package",
    "tensor_bytes_mismatch",
    "tensor_count_mismatch",
    "tensor_duplicated_across_artifacts",
    "tensor_in_wrong_layer",
    "too_few_layers",
    "undeclared_artifact",
    "unexpected_tensor_for_architecture",
    "unknown_experimental_policy",
    "unknown_generation_policy_value",
    "unknown_generation_profile",
    "unpinned_revision",
    "unsafe_artifact_path",
    "unsupported_native_mtp_prediction_depth",
    "unsupported_ngram_cache_max_window",
    "unsupported_ngram_suffix_window",
    "unsupported_projector_kind",
    "unsupported_schema_version",
    "unsupported_speculative_proposer_type",
    "unsupported_speculative_strategy_type",]
SPEC_WARNINGS = {
    "missing_activation_width", "undeclared_artifact", "hub_artifact_not_lfs",
    "activation_width_mismatch", "unexpected_tensor_for_architecture",
    "unknown_generation_profile", "readme_missing", "readme_missing_field",
}
# Codes a source (not a check) emits: ref parsing, the Hub, interrupted work.
SOURCE_CODES = {
    "direct_gguf_input", "invalid_package_ref", "unpinned_revision", "hub_repo_not_found",
    "hub_revision_not_found", "hub_gated", "hub_disabled", "hub_unauthorized",
    "hub_unreachable", "internal_error", "check_not_run", "missing_manifest",
    "manifest_too_large", "invalid_manifest_json", "verify_cache_rejected",
}
# Codes the HF Jobs launcher (meshcert/hubjobs/) emits about the jobs it ran, not about a package
# view.
LAUNCHER_CODES = {"hf_job_failed"}
# Codes the engine raises from the runtime gates' answers (meshcert.certify.coverage), not a
# check of the package view.
RUNTIME_CODES = {"runtime_model_mismatch"}
# Codes of signed certifications (meshcert.attest): attestation verification, not a check.
ATTESTATION_CODES = set(_ATTESTATION_CODES)
TESTS = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("code", SPEC_CODES)
def test_spec_code_is_catalogued(code: str) -> None:
    assert code in CODES
    expected = "warning" if code in SPEC_WARNINGS else "error"
    assert CODES[code].severity == expected, code
    assert CODES[code].remediation.strip()


def test_every_catalogued_code_is_emitted_by_a_check_or_a_source() -> None:
    declared = set().union(*(check.codes for check in all_checks()))
    orphans = sorted(set(CODES) - declared - SOURCE_CODES - MERGE_CODES - LAUNCHER_CODES
                     - CATALOG_RUN_CODES - ATTESTATION_CODES - RUNTIME_CODES)
    assert orphans == []


def test_every_catalogued_code_is_asserted_by_some_test() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in TESTS.rglob("*.py")
                     if p.resolve() != Path(__file__).resolve())
    untested = sorted(code for code in CODES if f'"{code}"' not in text
                      and f"'{code}'" not in text)
    assert untested == []


# Issue 21's codes, exactly these names and severities.
ISSUE_21_CODES = {
    "llama_cpp_crashed": "error", "metadata_tensor_copies_differ": "error",
    "slice_metadata_mismatch": "error", "stale_split_metadata": "warning",
    "native_abi_differs": "warning",
}


@pytest.mark.parametrize(("code", "severity"), sorted(ISSUE_21_CODES.items()))
def test_issue_21_code_is_catalogued(code: str, severity: str) -> None:
    assert CODES[code].severity == severity
    assert CODES[code].remediation.strip()


def test_llama_cpp_crashed_makes_a_result_incomplete_like_check_not_run() -> None:
    from meshcert.certify.engine import INCOMPLETE_CODES

    assert {"llama_cpp_crashed", "check_not_run"} <= INCOMPLETE_CODES


def test_finding_codes_doc_is_generated_from_the_catalog() -> None:
    """Regenerate with: python3 scripts/generate.py codes"""
    from meshcert.core.codes import codes_markdown

    doc = TESTS.parent / "docs" / "finding-codes.md"
    assert doc.read_text(encoding="utf-8") == codes_markdown()


def test_the_report_schema_lists_every_catalogued_code() -> None:
    from meshcert.certify.report import cert_json_schema

    schema = cert_json_schema()
    finding = schema["$defs"]["Finding"]  # type: ignore[index]
    assert finding["properties"]["code"]["enum"] == sorted(CODES)


# Words that tell a reader there is nothing to do: wrong for a finding that fails a package or
# asks for attention.
NOTHING_TO_DO = ("nothing to do", "nothing to fix", "no action", "safe to ignore",
                 "can be ignored")


def _remediations_at(code: str) -> list[tuple[Severity, str]]:
    row = CODES[code]
    return [(row.severity, row.remediation)] + [(r.severity, r.remediation) for r in row.raised]


@pytest.mark.parametrize("code", sorted(CODES))
def test_no_error_or_warning_says_there_is_nothing_to_do(code: str) -> None:
    for severity, remediation in _remediations_at(code):
        if severity in ("error", "warning"):
            said = [w for w in NOTHING_TO_DO if w in remediation.lower()]
            assert said == [], f"{code} ({severity}): {remediation}"


def test_a_raised_code_takes_the_remediation_written_for_its_severity() -> None:
    from meshcert.core.findings import finding

    v1 = finding("unknown_manifest_field", "unknown top-level field 'x' (ignored)")
    v2 = finding("unknown_manifest_field", "unknown field 'x': v2 objects reject unknown keys",
                 severity="error")
    assert v1.severity == "info" and v1.remediation.startswith("Nothing to do")
    assert v2.severity == "error"
    assert "Remove the field" in v2.remediation and "upgrade" in v2.remediation
    assert "nothing to do" not in v2.remediation.lower()
