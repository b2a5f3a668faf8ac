"""Speculative decoding defaults (package.md `generation.speculative_decoding`), with
mesh-llm's preflight codes: each broken rule gives its code; the GLM package's defaults
(strategy `mtp` over proposer `mtp-head`, composite `mtp-suffix`) give none.
"""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.certify.report import CertReport
from meshcert.core.codes import CODES
from tests.certify.checks.manifest_edits import (
    Edit,
    real_view,
    run_named_checks,
    shapes,
    spec,
)
from tests.conftest import PackageFactory, certify_dir, codes

SPECULATIVE_CODES = {c for c, row in CODES.items() if row.group == "speculative"}
# Needs the GGUF tensors (blk.N.nextn.*): checked and tested with the tensor checks.
NOT_MANIFEST_ONLY = {"native_mtp_layer_missing_tensors"}
SPECULATIVE_CHECKS = {"speculative_decoding", "speculative_proposers", "speculative_strategies"}

MTP = "strategies", "mtp"
COMPOSITE = "strategies", "mtp-suffix"
MTP_HEAD = "proposers", "mtp-head"
SUFFIX = "proposers", "suffix"
WINDOW = (*MTP, "window_policy")
CACHE_PROPOSER = {"type": "ngram-cache", "ngram_min": 1, "ngram_max": 4,
                  "max_proposal_tokens": 8, "history_scope": "request"}


def edits(*steps: Edit) -> Edit:
    """Several edits applied in order, as one."""
    def edit(manifest: dict[str, Any]) -> None:
        for step in steps:
            step(manifest)
    return edit


def with_cache_proposer(**fields: Any) -> Edit:
    """Declare an ngram-cache proposer `cache` (fields override the good values)."""
    return spec("proposers", "cache", value={**CACHE_PROPOSER, **fields})


def certify_glm(packages: PackageFactory, edit: Edit) -> CertReport:
    info = packages.build("glm")
    packages.edit_manifest(info, edit)
    return certify_dir(info.root)


def speculative_findings(report: CertReport) -> list[Any]:
    return [f for f in report.findings if f.code in SPECULATIVE_CODES]


# (edit, the code it must produce); one row at least per manifest-only code.
CASES: list[tuple[str, Edit, str]] = [
    ("blank default", spec("default", value=""), "empty_speculative_default"),
    ("no default", spec("default"), "empty_speculative_default"),
    ("default not a string", spec("default", value=["mtp"]), "empty_speculative_default"),
    ("default not declared", spec("default", value="ngram-cache"),
     "missing_speculative_default_strategy"),
    ("blank proposer name", spec("proposers", "", value=CACHE_PROPOSER),
     "empty_speculative_proposer_name"),
    ("unknown proposer type", spec(*MTP_HEAD, "type", value="eagle"),
     "unsupported_speculative_proposer_type"),
    ("proposer without type", spec(*SUFFIX, "type"), "unsupported_speculative_proposer_type"),
    ("blank strategy id", spec("strategies", " ", value={"type": "native-mtp",
                                                        "proposer": "mtp-head"}),
     "empty_speculative_strategy_name"),
    ("blank strategy type", spec(*MTP, "type", value=""), "empty_speculative_strategy_type"),
    ("strategy without type", spec(*MTP, "type"), "empty_speculative_strategy_type"),
    ("unknown strategy type", spec(*MTP, "type", value="eagle"),
     "unsupported_speculative_strategy_type"),
    ("draft-model as the default", edits(
        spec("strategies", "draft", value={"type": "draft-model", "model": "tiny.gguf"}),
        spec("default", value="draft")), "unsupported_speculative_strategy_type"),
    ("strategy names a missing proposer", spec(*MTP, "proposer", value="mtp-tail"),
     "missing_speculative_proposer"),
    ("proposer reference not a string", spec(*MTP, "proposer", value={"type": "native-mtp"}),
     "missing_speculative_proposer"),
    ("composite names a missing extender", spec(*COMPOSITE, "extender", value="cache"),
     "missing_speculative_proposer"),
    ("native-mtp strategy over an n-gram proposer", spec(*MTP, "proposer", value="suffix"),
     "native_mtp_strategy_proposer_type_mismatch"),
    ("n-gram strategy with neither proposer nor fields",
     spec("strategies", "ngram-suffix", value={"type": "ngram-suffix"}),
     "missing_ngram_strategy_proposer"),
    ("n-gram strategy over another n-gram type", spec(
        "strategies", "ngram-cache", value={"type": "ngram-cache", "proposer": "suffix"}),
     "ngram_strategy_proposer_type_mismatch"),
    ("composite without extension_policy", spec(*COMPOSITE, "extension_policy"),
     "missing_composite_extension_policy"),
    ("composite without primary", spec(*COMPOSITE, "primary"), "missing_composite_primary"),
    ("composite with blank extender", spec(*COMPOSITE, "extender", value=""),
     "missing_composite_extender"),
    ("composite primary is n-gram", spec(*COMPOSITE, "primary", value="suffix"),
     "invalid_composite_primary_type"),
    ("composite extender is native-mtp", spec(*COMPOSITE, "extender", value="mtp-head"),
     "invalid_composite_extender_type"),
    ("prediction depth 2", spec(*MTP_HEAD, "prediction_depth", value=2),
     "unsupported_native_mtp_prediction_depth"),
    ("inline strategy without depth", spec(*MTP, value={"type": "native-mtp",
                                                        "layer_indices": [3]}),
     "unsupported_native_mtp_prediction_depth"),
    ("empty layer_indices", spec(*MTP_HEAD, "layer_indices", value=[]),
     "missing_native_mtp_layers"),
    ("no layer_indices", spec(*MTP_HEAD, "layer_indices"), "missing_native_mtp_layers"),
    ("MTP layer == layer_count", spec(*MTP_HEAD, "layer_indices", value=[4]),
     "native_mtp_layer_out_of_range"),
    ("negative MTP layer", spec(*MTP_HEAD, "layer_indices", value=[-1]),
     "native_mtp_layer_out_of_range"),
    ("MTP layer as a string", spec(*MTP_HEAD, "layer_indices", value=["3"]),
     "native_mtp_layer_out_of_range"),
    ("inline MTP layer out of range", spec(*MTP, value={
        "type": "native-mtp", "prediction_depth": 1, "layer_indices": [9]}),
     "native_mtp_layer_out_of_range"),
    ("ngram_min above ngram_max", spec(*SUFFIX, "ngram_min", value=9),
     "invalid_ngram_proposer_window"),
    ("ngram_min zero", with_cache_proposer(ngram_min=0), "invalid_ngram_proposer_window"),
    ("max_proposal_tokens zero", spec(*SUFFIX, "max_proposal_tokens", value=0),
     "invalid_ngram_proposer_max_tokens"),
    ("no max_proposal_tokens", spec(*SUFFIX, "max_proposal_tokens"),
     "invalid_ngram_proposer_max_tokens"),
    ("ngram-cache max 5", with_cache_proposer(ngram_max=5), "unsupported_ngram_cache_max_window"),
    ("ngram-cache shared history", with_cache_proposer(history_scope="global"),
     "invalid_ngram_cache_history_scope"),
    ("ngram-suffix without history scope", spec(*SUFFIX, "history_scope"),
     "invalid_ngram_suffix_history_scope"),
    ("ngram-suffix min 2", spec(*SUFFIX, "ngram_min", value=2), "unsupported_ngram_suffix_window"),
    ("ngram-suffix max 65", spec(*SUFFIX, "ngram_max", value=65),
     "unsupported_ngram_suffix_window"),
    ("extension max_tokens zero", spec(*COMPOSITE, "extension_policy", "max_tokens", value=0),
     "invalid_extension_policy_tokens"),
    ("negative initial_tokens", spec(*COMPOSITE, "extension_policy", "initial_tokens", value=-1),
     "invalid_extension_policy_tokens"),
    ("fractional tail_backoff_proposals",
     spec(*COMPOSITE, "extension_policy", "tail_backoff_proposals", value=1.5),
     "invalid_extension_policy_tokens"),
    ("blank window default", spec(*WINDOW, "default", value=""), "empty_window_policy_default"),
    ("zero min_window", spec(*WINDOW, "min_window", value=0), "invalid_window_policy_zero"),
    ("no max_window", spec(*WINDOW, "max_window"), "invalid_window_policy_zero"),
    ("pipeline_depth zero", spec(*WINDOW, "pipeline_depth", value=0),
     "invalid_window_policy_pipeline_depth"),
    ("pipeline_depth 65", spec(*WINDOW, "pipeline_depth", value=65),
     "invalid_window_policy_pipeline_depth"),
    ("min_window above max_window", spec(*WINDOW, "min_window", value=3),
     "invalid_window_policy_bounds"),
    ("initial_window above max_window", spec(*WINDOW, "initial_window", value=3),
     "invalid_window_policy_initial"),
    ("package-level window policy", spec("window_policy", value={
        "default": "fixed", "min_window": 1, "initial_window": 1, "max_window": 1,
        "pipeline_depth": 99}), "invalid_window_policy_pipeline_depth"),
    ("legacy strategy id", edits(spec("strategies", "native-mtp-n1",
                                      value={"type": "native-mtp", "proposer": "mtp-head"})),
     "legacy_speculative_strategy_id"),
    ("disabled as a strategy", spec("strategies", "disabled", value={
        "type": "native-mtp", "proposer": "mtp-head"}), "operator_only_speculative_strategy"),
    ("ngram-simple proposer", spec(*SUFFIX, "type", value="ngram-simple"),
     "speculative_spec_disagreement"),
]


@pytest.mark.parametrize(("edit", "code"), [(e, c) for _, e, c in CASES],
                         ids=[label for label, _, _ in CASES])
def test_each_broken_rule_gives_its_code(packages: PackageFactory, edit: Edit,
                                         code: str) -> None:
    report = certify_glm(packages, edit)
    assert code in codes(report)
    assert "internal_error" not in codes(report)


def test_every_manifest_only_speculative_code_has_an_example() -> None:
    without_example = SPECULATIVE_CODES - NOT_MANIFEST_ONLY - {code for _, _, code in CASES}
    assert not without_example


def test_declared_glm_defaults_give_no_speculative_finding(packages: PackageFactory) -> None:
    report = certify_dir(packages.build("glm").root)
    assert not speculative_findings(report)
    assert not {"unknown_manifest_field", "invalid_manifest_field"} & codes(report)


def test_findings_name_the_manifest_and_the_json_location(packages: PackageFactory) -> None:
    report = certify_glm(packages, spec(*MTP_HEAD, "prediction_depth", value=2))
    [found] = speculative_findings(report)
    assert found.path == "model-package.json"
    assert "generation.speculative_decoding.proposers.mtp-head.prediction_depth" in found.message


def test_inline_native_mtp_strategy_is_accepted(packages: PackageFactory) -> None:
    """A native-mtp strategy may carry its own fields instead of referencing a proposer."""
    report = certify_glm(packages, spec(*MTP, value={
        "type": "native-mtp", "prediction_depth": 1, "layer_indices": [3]}))
    assert not speculative_findings(report)


def test_ngram_simple_is_unsupported_and_the_disagreement_is_reported(
        packages: PackageFactory) -> None:
    report = certify_glm(packages, spec(*SUFFIX, "type", value="ngram-simple"))
    by_code = {f.code: f for f in speculative_findings(report)}
    assert by_code["unsupported_speculative_proposer_type"].severity == "error"
    disagreement = by_code["speculative_spec_disagreement"]
    assert disagreement.severity == "warning" and "ngram-simple" in disagreement.message


def test_draft_model_is_ignored_unless_it_is_the_default(packages: PackageFactory) -> None:
    """package.md lets consumers ignore it; mesh-llm's package tool rejects it: a warning."""
    report = certify_glm(packages, spec("strategies", "draft", value={
        "type": "draft-model", "model": "tiny-draft.gguf"}))
    assert {f.code for f in speculative_findings(report)} == {"speculative_spec_disagreement"}


def test_inline_ngram_strategy_is_checked_and_flagged_as_a_disagreement(
        packages: PackageFactory) -> None:
    report = certify_glm(packages, spec("strategies", "ngram-cache", value={
        "type": "ngram-cache", **{k: v for k, v in CACHE_PROPOSER.items() if k != "type"},
        "ngram_max": 6}))
    assert {f.code for f in speculative_findings(report)} == {
        "speculative_spec_disagreement", "unsupported_ngram_cache_max_window"}


def test_a_well_formed_cache_strategy_and_composite_pass(packages: PackageFactory) -> None:
    report = certify_glm(packages, edits(
        with_cache_proposer(),
        spec("strategies", "ngram-cache", value={"type": "ngram-cache", "proposer": "cache"}),
        spec("strategies", "mtp-cache", value={
            "type": "composite", "primary": "mtp-head", "extender": "cache",
            "extension_policy": {"max_tokens": 4}})))
    assert not speculative_findings(report)


def test_legacy_default_means_mtp(packages: PackageFactory) -> None:
    """`native-mtp-n1` resolves to the declared `mtp`: a rename warning, not a missing default."""
    report = certify_glm(packages, spec("default", value="native-mtp-n1"))
    assert {f.code for f in speculative_findings(report)} == {"legacy_speculative_strategy_id"}
    assert all(f.severity == "warning" for f in speculative_findings(report))


def test_disabled_default_is_an_operator_choice(packages: PackageFactory) -> None:
    report = certify_glm(packages, spec("default", value="disabled"))
    assert {f.code for f in speculative_findings(report)} == {
        "operator_only_speculative_strategy", "missing_speculative_default_strategy"}


def test_composite_window_bounds_and_initial_are_reported_separately(
        packages: PackageFactory) -> None:
    report = certify_glm(packages, spec(*WINDOW, value={
        "default": "adaptive", "min_window": 4, "initial_window": 3, "max_window": 2}))
    assert {f.code for f in speculative_findings(report)} == {
        "invalid_window_policy_bounds", "invalid_window_policy_initial"}


# --- any JSON shape: a finding or nothing, never a crash -----------------------------------
@pytest.mark.parametrize("value", [["x"], "x", 7, {}], ids=repr)
@pytest.mark.parametrize("where", [
    (), ("default",), ("proposers",), MTP_HEAD, ("strategies",), MTP, COMPOSITE, WINDOW,
    (*COMPOSITE, "extension_policy"), (*MTP_HEAD, "layer_indices"), ("window_policy",),
], ids=lambda where: "/".join(where) or "speculative_decoding")
def test_wrong_types_at_every_level_never_crash(packages: PackageFactory,
                                                where: tuple[str, ...], value: Any) -> None:
    """End to end: the value at each level replaced by a list, string, number or object."""
    report = certify_glm(packages, spec(*where, value=value))
    assert "internal_error" not in codes(report)


def test_every_value_of_the_speculative_tree_may_be_garbage(packages: PackageFactory) -> None:
    """Each value under speculative_decoding replaced in turn by every JSON type."""
    info = packages.build("glm")
    view = real_view(info)
    speculative = info.manifest["generation"]["speculative_decoding"]
    for label, variant in shapes(speculative):
        manifest = {**info.manifest,
                    "generation": {**info.manifest["generation"], "speculative_decoding": variant}}
        found = run_named_checks(view, manifest, SPECULATIVE_CHECKS | {"generation_fields"})
        assert "internal_error" not in {f.code for f in found}, label


# extension_policy as mesh-llm's package tests hold it (package.md): each of these passed once.
EXTENSION = (*COMPOSITE, "extension_policy")


def _extension_findings(packages: PackageFactory, **values: int) -> list[str]:
    report = certify_glm(packages, spec(*EXTENSION, value={"max_tokens": 8, **values}))
    assert report.status == "failed"
    return [f.message for f in report.findings if f.code == "invalid_extension_policy_tokens"]


def test_initial_tokens_above_max_tokens_is_invalid(packages: PackageFactory) -> None:
    [message] = _extension_findings(packages, initial_tokens=9)
    assert "initial_tokens 9 is above max_tokens 8" in message


def test_zero_initial_tokens_is_invalid(packages: PackageFactory) -> None:
    [message] = _extension_findings(packages, initial_tokens=0)
    assert "initial_tokens is 0" in message and "> 0" in message


def test_zero_tail_backoff_proposals_is_invalid(packages: PackageFactory) -> None:
    [message] = _extension_findings(packages, tail_backoff_proposals=0)
    assert "tail_backoff_proposals is 0" in message


def test_initial_tokens_equal_to_max_tokens_is_valid(packages: PackageFactory) -> None:
    report = certify_glm(packages, spec(*EXTENSION, value={
        "max_tokens": 8, "initial_tokens": 8, "tail_backoff_proposals": 1}))
    assert not speculative_findings(report)
