"""Every check in a report says what happened (issue 34): it did work (passed, warning,
failed, error) or it says `skipped` and why: `not asked for: runs with <flag>`, or
`not applicable: <why>`. A skipped check counts neither as passed nor as failed.

The walk covers every registered check: a plain v1 package runs the v1 checks and the shared
ones, a plain v2 package the v2 ones; a check registered for neither fails the walk. The
expected skips of a plain package are listed here by hand: a new check must be added to one
list or the other, so whether it ran on a plain package is decided by a person once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.checks import all_checks
from meshcert.certify.report import CertReport, CheckRun
from meshcert.certify.scope import ScopeRequest
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from tests.certify.v2_packages import build_v2, tiny_source
from tests.conftest import PackageFactory, certify_dir

# on a plain local package (no flag given): the checks that must say why they did nothing
NOT_ASKED_FOR = {
    "scope": "--layers A..B or --stage I/N",
    "stage_plan": "--stages N",
    "generation_evidence": "--evidence decisions.json",
    "source_parity": "--source SOURCE.gguf",
    "stage_materialization": "--materialize",
    "split_parity": "--parity SOURCE.gguf",
    "source_identity": "models certify or catalog certify (the library: "
                       "CertOptions.source_identity)",
}
NOT_APPLICABLE_V1 = {"projectors", "hub_metadata", "generation_fields", "generation_policy",
                     "generation_thresholds", "speculative_decoding", "speculative_proposers",
                     "speculative_strategies", "native_mtp_tensors", "glm_dsa_contract"}
NOT_APPLICABLE_V2 = {"hub_metadata", "v2_sidecars", "glm_dsa_architecture_v2",
                     "publisher_json", "publisher_config_geometry", "publisher_defaults_files",
                     "publisher_chat_templates"}
# checks no flag asks for whose tool may be missing here: skipped "not available", never passed
NEEDS_A_TOOL = {"llama_cpp_gguf": "llama-cpp-python is not installed (pip install "
                "'meshcert[live]'); llama.cpp's parser was not asked"}
V1_ONLY_ASKED = {"generation_evidence"}  # a v1 rule (v2 has no generation.policy)


def _runs(report: CertReport) -> dict[str, CheckRun]:
    return {run.name: run for run in report.checks}


def _assert_honest(report: CertReport, not_applicable: set[str]) -> None:
    for run in report.checks:
        if run.name in NOT_ASKED_FOR and run.name in _runs(report):
            assert run.status == "skipped", run
            assert run.details == f"not asked for: runs with {NOT_ASKED_FOR[run.name]}", run
        elif run.name in not_applicable:
            assert run.status == "skipped", run
            assert run.details is not None and run.details.startswith("not applicable: "), run
            assert len(run.details) > len("not applicable: ") + 10, run  # it says why
        elif run.name in NEEDS_A_TOOL and run.status == "skipped":  # where the tool is missing
            assert run.details == f"not available: {NEEDS_A_TOOL[run.name]}", run
        else:  # it did work on the plain package, and the package passes it
            assert run.status in {"passed", "warning"}, run
            assert run.details is None, run
        if run.status == "skipped":
            assert run.findings == 0 and run.codes == [], run


def test_every_registered_check_did_work_or_says_why_not(tmp_path: Path) -> None:
    v1 = certify_dir(PackageFactory(tmp_path / "v1").build("llama").root)
    v2 = certify_dir(build_v2(tmp_path / "v2").root)
    assert v1.status == "passed" and v2.status == "passed"
    assert v1.package_format == "v1" and v2.package_format == "v2"
    walked = set(_runs(v1)) | set(_runs(v2))
    assert walked == {check.name for check in all_checks()}
    _assert_honest(v1, NOT_APPLICABLE_V1)
    _assert_honest(v2, NOT_APPLICABLE_V2)
    skipped = {run.name for run in v1.checks if run.status == "skipped"} - set(NEEDS_A_TOOL)
    assert skipped == set(NOT_ASKED_FOR) | NOT_APPLICABLE_V1
    skipped = {run.name for run in v2.checks if run.status == "skipped"} - set(NEEDS_A_TOOL)
    assert skipped == (set(NOT_ASKED_FOR) - V1_ONLY_ASKED) | NOT_APPLICABLE_V2


def test_evidence_given_for_a_v2_package_is_said_unused(tmp_path: Path) -> None:
    """--evidence gates a v1 manifest's switches: on a v2 package it is not silently
    ignored, the check it feeds is skipped saying the option was not used."""
    v2 = certify_dir(build_v2(tmp_path / "v2").root, evidence_verdicts={"dense": "promote"})
    run = _runs(v2)["generation_evidence"]
    assert run.status == "skipped" and run.details == (
        "not applicable: --evidence decisions.json was given but applies to v1 packages only; "
        "this package is v2: the option was not used")
    assert v2.status == "passed"


def test_the_flag_named_runs_the_check(tmp_path: Path) -> None:
    """What a skipped check says runs it does run it: --source, --stages and a slice."""
    info = PackageFactory(tmp_path).build("llama")
    source = tiny_source(tmp_path / "src")
    report = certify_package(CertRequest(model=str(info.root), source_gguf=str(source),
                                         options=CertOptions(stages=2)))
    runs = _runs(report)
    assert runs["source_parity"].status != "skipped"
    assert runs["stage_plan"].status == "passed" and runs["stage_plan"].details is None
    sliced = certify_dir(info.root, scope=ScopeRequest(layer_start=0, layer_end=2))
    assert _runs(sliced)["scope"].status == "passed"


def test_a_package_that_declares_it_runs_the_checks_that_were_not_applicable(
        packages: PackageFactory) -> None:
    """The GLM-DSA package declares generation.policy (profile glm-dsa-v1), thresholds and a
    native-mtp layer: the checks skipped on a plain llama package run on it."""
    report = certify_dir(packages.build("glm").root)
    runs = _runs(report)
    for name in ("generation_fields", "generation_policy", "glm_dsa_contract"):
        assert runs[name].status != "skipped", runs[name]


def test_asked_for_but_never_produced_is_not_run_not_passed(packages: PackageFactory) -> None:
    """--parity asked but no result left on the view (the run was contained): the check says
    check_not_run, so the report is incomplete, never passed."""
    from meshcert.certify.engine import build_report, utc_now
    from meshcert.certify.sources.local import load_local_package

    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x",
                              options=CertOptions(parity=True, materialize=True))
    report = build_report(view, input_text="x", started_at=utc_now())
    runs = _runs(report)
    assert runs["split_parity"].status == "error"
    assert runs["stage_materialization"].status == "error"
    assert report.status == "incomplete"


def test_a_check_that_did_no_work_takes_no_time_and_work_done_for_it_counts(
        packages: PackageFactory) -> None:
    """duration_ms includes the work done for a check before it ran (view.work_ms)."""
    from meshcert.certify.engine import build_report, utc_now
    from meshcert.certify.sources.local import load_local_package

    info = packages.build("llama")
    view = load_local_package(str(info.root), display_ref="x",
                              options=CertOptions(source=True))
    view.work_ms["source_parity"] = 23_000.0  # e.g. the source read and hashed first
    report = build_report(view, input_text="x", started_at=utc_now())
    assert _runs(report)["source_parity"].duration_ms >= 23_000.0


@pytest.mark.slow
def test_a_real_smollm2_package_only_run_is_honest(tmp_path: Path) -> None:
    """The real SmolLM2 package, as `models certify --package-only` sees it."""
    from tests.support.real_models import smollm2_path
    from tests.support.splits import split_v2

    pkg = split_v2(smollm2_path(), tmp_path / "pkg", model_id="HuggingFaceTB/SmolLM2-GGUF:Q4_1",
                   repo="HuggingFaceTB/SmolLM2-135M-Instruct", revision="main")
    report = certify_dir(pkg.root)
    assert report.status == "passed"
    runs = _runs(report)
    for name in ("source_parity", "stage_materialization", "split_parity", "hub_metadata",
                 "glm_dsa_architecture_v2"):
        assert runs[name].status == "skipped" and runs[name].details, runs[name]
    for name in ("chat_templates", "tokenizer", "artifact_files", "gguf_structure"):
        assert runs[name].status == "passed", runs[name]
    assert runs["chat_templates"].duration_ms > 0
