"""SARIF 2.1.0 of an evidence report: rule ids, levels and locations from real fixtures,
validated against the vendored OASIS schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from meshcert.evidence.examplegen import CONSOLE_NAME, DATA_DIR, example_files
from meshcert.evidence.report import EvidenceReport
from meshcert.evidence.rules import ENV_VARS
from meshcert.evidence.service import report_files
from meshcert.reports.evidence.sarif import build_evidence_sarif, render_evidence_sarif, uri
from meshcert.reports.outputs import write_reports
from tests.evidence.gate_logs import parity_console, repeated, row_name, settings
from tests.evidence.parsers.helpers import DATA as MESH_DATA
from tests.reports.certification.test_sarif import validate

MESH_FILES = ["history.jsonl", "comparison-adaptive.json", "comparison-failed.json",
              "promotion.json", "spec-bench.json", "focused-schema-smoke.json"]


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var.name, raising=False)


def _report(files: list[Path]) -> EvidenceReport:
    return report_files(files, settings=settings()).report


def _located(result: dict[str, Any]) -> list[tuple[str, int | None]]:
    return [(loc["physicalLocation"]["artifactLocation"]["uri"],
             loc["physicalLocation"].get("region", {}).get("startLine"))
            for loc in result.get("locations", [])]


def test_the_bundled_example_fails_on_missing_rows_and_the_merged_shared_tripwire() -> None:
    doc = build_evidence_sarif(_report(example_files()), cwd=str(DATA_DIR))
    validate(doc)
    [run] = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "meshcert"
    assert [r["id"] for r in driver["rules"]] == [
        "decision.moe_merged_shared_gate_up", "gate.merged_shexp_review", "gate.required_rows"]
    assert [r["defaultConfiguration"]["level"] for r in driver["rules"]] == [
        "warning", "error", "error"]
    results = run["results"]
    assert [(r["ruleId"], r["level"]) for r in results] == [
        ("decision.moe_merged_shared_gate_up", "warning"), ("gate.merged_shexp_review", "error"),
        *[("gate.required_rows", "error")] * 7]
    for r in results:
        assert driver["rules"][r["ruleIndex"]]["id"] == r["ruleId"]
    # the seven published-nowhere rows (docs: meshcert/evidence/data/README.md) have no file
    missing = [r for r in results if r["ruleId"] == "gate.required_rows"]
    assert all("locations" not in r for r in missing)
    assert {r["properties"]["row"] for r in missing} == {
        "routed_gate_up_q2_K", "routed_down_q3_K", "routed_down_q2_K", "small_graph_fused",
        "shexp_q3_K", "shexp_q2_K", "ffn_q2_down_weighted"}
    gate = results[1]
    # console log line 18 is combined FFN q3_K (1147.21 us), line 20 the merged one (868.59 us)
    lines = (DATA_DIR / CONSOLE_NAME).read_text(encoding="utf-8").splitlines()
    assert "1147.21 us/run" in lines[17] and "868.59 us/run" in lines[19]
    assert _located(gate) == [(CONSOLE_NAME, 18), (CONSOLE_NAME, 20)]
    assert gate["message"]["text"] == (
        "gate merged_shexp_review failed: variant default, ratio 1.321, limit <= 1.02 "
        "(GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP): combined FFN q3_K / q3_K merged shared "
        "gate/up speedup 1.321x is above GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP=1.02: "
        "revisit disabled merged shared-expert policy")
    assert _located(results[0]) == [(CONSOLE_NAME, 18), (CONSOLE_NAME, 20)]
    assert results[0]["message"]["text"].startswith(
        "decision moe_merged_shared_gate_up inconclusive: review required: revisit disabled "
        "merged shared-expert policy (point estimate 1.321x > 1.02)")
    assert run["properties"] == {"verdict": "failed", "summary": "6 decision(s): 1 failed, 5 "
                                 "undecided", "gate_applies": True, "gate_passed": False,
                                 "enforced": False, "backend": "Metal"}


def test_the_output_is_deterministic() -> None:
    report = _report(example_files())
    assert render_evidence_sarif(report) == render_evidence_sarif(report.model_copy(deep=True))


def test_mesh_history_regressions_are_errors_at_their_line(monkeypatch: pytest.MonkeyPatch
                                                            ) -> None:
    monkeypatch.chdir(MESH_DATA)
    doc = build_evidence_sarif(_report([Path(f) for f in MESH_FILES]))
    validate(doc)
    results = [r for r in doc["runs"][0]["results"] if r["ruleId"] != "gate.required_rows"]
    assert [(r["ruleId"], r["level"], _located(r)) for r in results] == [
        ("history.correctness-failure", "error", [("history.jsonl", 22)]),
        ("history.performance-regression", "error", [("history.jsonl", 5)]),
        ("history.performance-regression", "error", [("history.jsonl", 15)]),
        ("ingest-problem", "warning", [("comparison-failed.json", 9)]),  # comparison_admitted
        ("ingest-problem", "warning", [("focused-schema-smoke.json", 1)]),
        ("promotion-check", "warning", [("promotion.json", None)]),
    ]
    history = json.loads((MESH_DATA / "history.jsonl").read_text().splitlines()[4])
    assert history["cohort"]["arm"] == "mesh"  # line 5 is the mesh arm's latest run
    assert "arm=mesh" in results[1]["message"]["text"]
    assert "limit 5%" in results[1]["message"]["text"]


def test_a_parity_failure_rejects_at_the_failing_line(tmp_path: Path) -> None:
    texts = {**repeated({"ffn_q3_down": 1147.21, "ffn_q2_down": 817.38}, 5),
             "parity.console.log": parity_console({"ffn_q3_down": True, "ffn_q2_down": False})}
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    doc = build_evidence_sarif(_report([tmp_path / n for n in texts]), cwd=str(tmp_path))
    validate(doc)
    [q2] = [r for r in doc["runs"][0]["results"] if r["ruleId"] == "decision.q2_K_routed_down"]
    assert q2["level"] == "error"
    assert q2["properties"]["verdict"] == "reject"
    assert q2["message"]["text"].startswith("decision q2_K_routed_down reject: parity failed: "
                                            "ffn_q2_down (Metal)")
    assert "speedup 1.40" in q2["message"]["text"] and "limit > " in q2["message"]["text"]
    parity = texts["parity.console.log"].splitlines()
    failing = next(i for i, line in enumerate(parity, 1)
                   if row_name("ffn_q2_down") in line and "FAIL" in line)
    assert ("parity.console.log", failing) in _located(q2)
    assert {u for u, _ in _located(q2)} <= set(texts)


def test_write_reports_writes_evidence_sarif(tmp_path: Path) -> None:
    written = write_reports(_report(example_files()), sarif=tmp_path / "e.sarif")
    doc = json.loads(written["sarif"].read_text(encoding="utf-8"))
    validate(doc)
    assert doc["version"] == "2.1.0"


def test_uris_are_relative_under_the_working_dir_and_absolute_elsewhere(tmp_path: Path) -> None:
    inside = tmp_path / "logs" / "run 1.log"
    assert uri(str(inside), cwd=str(tmp_path)) == "logs/run%201.log"
    assert uri("/elsewhere/x.log", cwd=str(tmp_path)) == "file:///elsewhere/x.log"
    assert uri("hf://datasets/ns/name", cwd=str(tmp_path)) == "hf://datasets/ns/name"
