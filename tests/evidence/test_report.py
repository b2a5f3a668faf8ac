"""decisions.json: the EvidenceReport model, its provenance and its JSON Schema."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from meshcert.certify.request_options import load_evidence_verdicts
from meshcert.evidence import ingest_texts
from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.report import VERDICTS, EvidenceReport, schema_text
from tests.evidence.gate_logs import PASSING_US, perf_console, repeated, row_name, settings

SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "evidence.schema.json"


def test_the_json_schema_file_matches_the_models() -> None:
    """Regenerate with `python3 scripts/generate.py evidence-schema`."""
    assert SCHEMA.read_text(encoding="utf-8") == schema_text()


def test_schema_names_policy_and_the_verdicts() -> None:
    schema = json.loads(schema_text())
    decision = schema["$defs"]["Decision"]
    assert {"policy", "verdict"} <= set(decision["required"])
    assert decision["properties"]["verdict"]["enum"] == list(VERDICTS)
    # version 2 added the mesh-llm fields (mesh_rows, history, ab_decisions, ...); a version 1
    # decisions.json still validates
    assert schema["properties"]["schema_version"]["enum"] == [1, 2]
    assert schema["properties"]["schema_version"]["default"] == 2
    history = schema["$defs"]["HistoryVerdict"]
    assert {"cohort_key", "history_class"} <= set(history["required"])
    assert history["properties"]["history_class"]["enum"] == [
        "correctness-failure", "insufficient-baseline", "performance-regression", "pass"]
    assert schema["$defs"]["ABDecision"]["properties"]["verdict"]["enum"] == [
        "promote", "reject", "inconclusive", "undecided", "no-practical-change"]


@pytest.fixture
def report() -> EvidenceReport:
    us = {k: v for k, v in PASSING_US.items() if k != "routed_down_q2_K"}
    texts = repeated(us, 3)
    texts["unsupported.console.log"] = perf_console({"route": 3.3}).replace(
        "  Backend Metal: OK", f"  {row_name('routed_down_q2_K')}: not supported\n"
        "  Backend Metal: OK")
    texts["broken.console.log"] = perf_console({"route": 3.3}).replace(
        "2048 runs -     3.30 us/run", "2048 runs - x us/run")
    result = ingest_texts(texts)
    options = BuildOptions(label="demo", decisions=DecisionOptions(replicates=2000),
                           generated_at="2026-01-01T00:00:00Z", tool_version="9.9")
    return build_report(result.table, settings=settings(GLM52_PHASE_E_REQUIRE_GATES=1),
                        options=options, problems=result.problems, sources=result.sources)


def test_report_round_trips_through_json(report: EvidenceReport) -> None:
    again = EvidenceReport.model_validate_json(report.to_json())
    assert again == report
    assert report.to_json().endswith("}\n")


def test_certify_reads_policy_and_verdict(report: EvidenceReport, tmp_path: Path) -> None:
    path = tmp_path / "decisions.json"
    path.write_text(report.to_json(), encoding="utf-8")
    assert load_evidence_verdicts(str(path)) == {
        "moe_merged_shared_gate_up": "keep-evidence-gated",
        "moe_weighted_down": "keep-evidence-gated",
        "q2_K_routed_down": "keep-evidence-gated"}


def test_inputs_carry_provenance_and_problems(report: EvidenceReport) -> None:
    files = {f.path: f for f in report.inputs.files}
    run = files["run-1.console.log"]
    assert run.formats == ["tbo-console"] and run.backends == ["Metal"]
    assert run.sha256 is not None and len(run.sha256) == 64 and run.lines
    assert run.kinds == {"perf": len(PASSING_US) - 1}
    assert report.inputs.label == "demo" and report.inputs.backend == "Metal"
    assert any(p.startswith("broken.console.log:") for p in report.inputs.problems)
    assert report.generated_at == "2026-01-01T00:00:00Z" and report.tool.version == "9.9"


def test_rows_components_settings_and_method(report: EvidenceReport) -> None:
    route = next(r for r in report.rows if r.labels == ["route"])
    assert route.n == 4 and route.sample_source == "perf" and len(route.sources) == 4
    assert route.median_us is not None and route.iqr_us is not None
    components = {c.label: c for c in report.components}
    assert components["routed_down_q2_K"].status == "not supported"
    assert components["weighted_sum_4tok"].status == "missing"
    assert components["route"].required and not components["weighted_sum_4tok"].required
    assert components["route"].pattern == ("TOPK_MOE_GLM_ROUTE(n_expert=256,n_expert_used=8,"
                                           "n_tokens=1)")
    require = next(s for s in report.settings if s.name == "GLM52_PHASE_E_REQUIRE_GATES")
    assert (require.value, require.source) == (1.0, "env")
    assert report.method.name == "bootstrap-median-ratio"
    assert report.method.replicates == 2000 and report.method.min_samples == 3
    assert "Holm" in report.method.multiple_comparisons
    assert report.gate.enforced and not report.gate.passed
    assert report.estimate == report.gate.estimate and report.estimate is not None


def test_decision_fields_a_reviewer_needs(report: EvidenceReport) -> None:
    d = next(x for x in report.decisions if x.policy == "q2_K_routed_down")
    assert d.verdict == "keep-evidence-gated" and d.kind == "quant-recipe"
    assert d.reason == "speedup cleared 1.08 but both parity and quality evidence are missing"
    assert d.threshold == 1.08 and d.threshold_env == "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP"
    assert "inconclusive if any side has fewer than 3 samples" in d.rule
    assert d.comparisons[0].baseline[0].label == "ffn_q3_down"
    assert d.quality is not None and d.quality.status == "missing"
    assert d.sources and all(s.line for s in d.sources)
