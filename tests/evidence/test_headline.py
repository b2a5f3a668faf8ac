"""The report leads with what the evidence decides (issue 35, item 3).

The mesh-llm inputs are the hand-derived fixtures of tests/evidence/data/mesh/ (see its
README); the KV-cache files are llama-bench JSON and llama-perplexity lines shaped as the tools
print them, with values chosen by hand so q8_0 wins by 10% at a perplexity ratio of 1.0002.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.evidence import ingest_texts
from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.examplegen import example_files
from meshcert.evidence.gates import NOT_APPLICABLE
from meshcert.evidence.headline import overall_status
from meshcert.evidence.report import HeadlineItem
from tests.evidence.gate_logs import PASSING_US, repeated, settings
from tests.evidence.parsers.helpers import DATA
from tests.evidence.test_kv_dtype import BASE, FAST, _bench, _ppl
from tests.reports.dom import parse
from tests.reports.junit_shape import outcome, validate

runner = CliRunner()
OPTIONS = BuildOptions(decisions=DecisionOptions(replicates=2000))


def _item(outcome_: str) -> HeadlineItem:
    return HeadlineItem(kind="ab", subject="x", verdict="v", outcome=outcome_)  # type: ignore[arg-type]


def test_the_overall_status_rule() -> None:
    assert overall_status([]) == "incomplete"  # nothing decided is not a pass
    assert overall_status([_item("passed")]) == "passed"
    assert overall_status([_item("passed"), _item("undecided")]) == "incomplete"
    assert overall_status([_item("undecided"), _item("failed")]) == "failed"


def _kv_files(tmp_path: Path) -> list[Path]:
    texts = {"bench-f16.json": _bench("f16", BASE), "bench-q8_0.json": _bench("q8_0", FAST),
             "ppl-f16.txt": _ppl(6.1, 0.001), "ppl-q8_0.txt": _ppl(6.101, 0.001)}
    out = []
    for name, body in texts.items():
        (tmp_path / name).write_text(body)
        out.append(tmp_path / name)
    return out


def test_mesh_llm_evidence_is_not_judged_by_the_glm_gate(tmp_path: Path) -> None:
    files = [DATA / "comparison-adaptive-8-rounds.json", DATA / "promotion.json",
             *_kv_files(tmp_path)]
    result = ingest_texts({str(f): f.read_text() for f in files})
    report = build_report(result.table, settings=settings(), options=OPTIONS,
                          sources=result.sources)
    assert not report.gate.applies and report.gate.state == "not-applicable"
    assert report.gate.applicability == NOT_APPLICABLE
    assert report.gate.missing_rows == [] and report.gate.errors == []
    assert {c.status for c in report.gate.checks} == {"skipped"}
    head = report.headline
    assert head is not None
    assert [(i.kind, i.subject, i.verdict) for i in head.items] == [
        ("ab", "A/B v0.78.0 -> v0.79.0", "promote"), ("kv-dtype", "KV dtype q8_0 vs f16",
                                                      "promote"),
        ("promotion", "promotion h100/qwen3-8b", "inconclusive")]
    assert head.status == "incomplete" and head.phase_e.startswith("not applicable")


def test_phase_e_rows_or_asking_make_the_gate_apply() -> None:
    result = ingest_texts(repeated(PASSING_US, 3, spread=0.0))
    report = build_report(result.table, settings=settings(), options=OPTIONS,
                          sources=result.sources)
    assert report.gate.applies and report.gate.applicability.startswith(
        "the evidence holds Phase E rows: route")
    assert report.headline is not None
    assert report.headline.items[0].kind == "phase-e-gate"
    empty = ingest_texts({str(DATA / "spec-bench.json"):
                          (DATA / "spec-bench.json").read_text()})
    asked = build_report(empty.table, settings=settings(), options=BuildOptions(
        decisions=OPTIONS.decisions, phase_e=True))
    assert asked.gate.applies and asked.gate.applicability == "asked for (--phase-e)"
    assert asked.gate.state == "incomplete" and len(asked.gate.missing_rows) == 15
    required = build_report(empty.table, settings=settings(GLM52_PHASE_E_REQUIRE_GATES="1"),
                            options=OPTIONS)
    assert required.gate.applies and required.gate.enforced
    assert required.gate.errors[0].startswith("error: missing Phase E MoE gate rows: ")


def test_gate_command_not_applicable_and_asked_for() -> None:
    files = [str(DATA / "comparison-adaptive.json")]
    result = runner.invoke(app, ["evidence", "gate", *files])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"Phase E MoE gate: {NOT_APPLICABLE}"
    asked = runner.invoke(app, ["evidence", "gate", *files, "--phase-e"])
    assert asked.exit_code == 0 and "Phase E MoE gate: FAILED (advisory" in asked.stdout
    assert "required rows: 0/15 present" in asked.stdout
    enforced = runner.invoke(app, ["evidence", "gate", *files],
                             env={"GLM52_PHASE_E_REQUIRE_GATES": "1"})
    assert enforced.exit_code == 2
    assert "error: missing Phase E MoE gate rows: route, " in enforced.stderr


# --------------------------------------------------------------------------------------------
# Every format states the same overall verdict for the same input.
# --------------------------------------------------------------------------------------------

def _inputs(case: str, tmp_path: Path) -> list[Path]:
    if case == "ab-kv":
        return [DATA / "comparison-adaptive-8-rounds.json", *_kv_files(tmp_path)]
    if case == "ab-kv-promotion":
        return [DATA / "comparison-adaptive-8-rounds.json", DATA / "promotion.json",
                *_kv_files(tmp_path)]
    if case == "history":
        return [DATA / "history.jsonl", DATA / "comparison-adaptive.json"]
    if case == "glm-example":
        return example_files()
    assert case == "nothing-decided"
    return [DATA / "spec-bench.json"]


def _verdicts(out: Path, console: str) -> dict[str, str]:
    lines = [line for line in console.splitlines() if line.startswith("verdict: ")]
    assert len(lines) == 1 and console.splitlines()[0] == lines[0]  # the headline leads
    html = parse((out / "r.html").read_text()).find("header", id="verdict")
    markdown = (out / "r.md").read_text()
    assert markdown == (out / "d" / "summary.md").read_text()   # one Markdown per report
    summary = next(line for line in markdown.splitlines() if line.startswith("Verdict: "))
    suites = validate((out / "r.xml").read_text()).findall("testsuite")
    props = {p.get("name"): p.get("value") for p in suites[0].iter("property")}
    verdict_case = suites[0].find("testcase")
    assert verdict_case is not None and verdict_case.get("name") == "verdict"
    junit_case = {"failure": "failed", "skipped": "incomplete", "passed": "passed"}[
        outcome(verdict_case)]
    sarif = json.loads((out / "r.sarif").read_text())["runs"][0]
    errors = sum(r["level"] == "error" for r in sarif["results"])
    sarif_says = sarif["properties"]["verdict"]
    assert (errors > 0) if sarif_says == "failed" else True
    assert (errors == 0) if sarif_says == "passed" else True
    return {
        "console": lines[0].split()[1].lower(),
        "decisions.json": json.loads((out / "d" / "decisions.json").read_text())[
            "headline"]["status"],
        "html": html.attrs["data-status"],
        "html text": html.find(cls="verdict-text").text().lower(),
        "markdown (--md and summary.md)": summary.split("**")[1].lower(),
        "junit property": str(props["verdict"]),
        "junit testcase": junit_case,
        "sarif": sarif_says,
    }


@pytest.mark.parametrize(("case", "expected"), [
    ("ab-kv", "passed"), ("ab-kv-promotion", "incomplete"), ("history", "failed"),
    ("glm-example", "failed"), ("nothing-decided", "incomplete")])
def test_every_format_states_the_same_verdict(tmp_path: Path, case: str,
                                               expected: str) -> None:
    files = [str(f) for f in _inputs(case, tmp_path)]
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir",
                                 str(tmp_path / "d"), "--html", str(tmp_path / "r.html"),
                                 "--md", str(tmp_path / "r.md"), "--junit",
                                 str(tmp_path / "r.xml"), "--sarif", str(tmp_path / "r.sarif")])
    assert result.exit_code == 0, result.output
    said = _verdicts(tmp_path, result.stdout)
    assert said == dict.fromkeys(said, expected)


def test_the_a_b_decision_leads_the_mesh_llm_report(tmp_path: Path) -> None:
    files = [str(f) for f in _inputs("ab-kv-promotion", tmp_path)]
    result = runner.invoke(app, ["evidence", "report", *files, "--out-dir", str(tmp_path / "d"),
                                 "--html", str(tmp_path / "r.html")])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == ("verdict: INCOMPLETE (3 decision(s): 1 undecided, 2 passed)")
    assert lines[1].split()[:5] == ["ok", "A/B", "v0.78.0", "->", "v0.79.0"]
    assert "promote" in lines[1]
    assert lines[4] == f"Phase E MoE gate: {NOT_APPLICABLE}"
    assert "Phase E MoE gate: FAILED" not in result.stdout and "0/15" not in result.stdout
    page = parse((tmp_path / "r.html").read_text())
    banner = page.find("header", id="verdict")
    first = banner.find("table", cls="headline-items").find_all(
        "tr", where=lambda n: "data-kind" in n.attrs)[0]
    assert (first.attrs["data-kind"], first.attrs["data-verdict"]) == ("ab", "promote")
    assert "0/15" not in banner.text() and "measured rows" not in banner.text()
    gate = page.find("section", id="gate")
    assert gate.attrs["data-status"] == "not-applicable"


def test_a_long_reason_is_cut_between_words_never_inside_a_name() -> None:
    # issue 45: piped, the headline cut 'GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SP...'
    from meshcert.cli.evidence_console import REASON_WIDTH, _shortened

    reason = ("combined FFN q3_K / q3_K merged shared gate/up speedup 1.321x is above "
              "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP=1.02: revisit disabled merged "
              "shared-expert policy")
    short = _shortened(reason)
    assert short == "combined FFN q3_K / q3_K merged shared gate/up speedup 1.321x is above..."
    assert len(short) <= REASON_WIDTH
    assert _shortened("fewer than 3 samples on a side") == "fewer than 3 samples on a side"
    one_word = "x" * (REASON_WIDTH + 5)  # no space to cut at: cut at the width
    assert _shortened(one_word) == "x" * (REASON_WIDTH - 3) + "..."
