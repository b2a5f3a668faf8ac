"""summary.md: the script's sections, then gates and decisions."""

from __future__ import annotations

from meshcert.evidence import ingest_texts
from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.report import EvidenceReport, PackageCheck
from meshcert.reports.evidence.markdown import render_evidence_summary
from tests.evidence.gate_logs import PASSING_US, repeated, settings

OPTIONS = BuildOptions(decisions=DecisionOptions(replicates=2000))


def _report(us: dict[str, float], runs: int = 3, **kw: object) -> EvidenceReport:
    result = ingest_texts(repeated(us, runs, spread=0.0))
    return build_report(result.table, settings=settings(), options=OPTIONS,
                        sources=result.sources, **kw)  # type: ignore[arg-type]


def test_sections_in_the_scripts_order() -> None:
    text = render_evidence_summary(_report(PASSING_US))
    heads = [line for line in text.splitlines() if line.startswith("## ")]
    assert heads[:5] == ["## Inputs", "## Decode Components",
                         "## Estimated Routed FFN Decode Cost", "## Gates", "## Decisions"]
    assert heads[-1] == "## Method"


def test_components_say_missing_and_the_estimate_reads_as_the_script() -> None:
    text = render_evidence_summary(_report(PASSING_US))
    assert "| weighted sum 4 tok | default | missing | - | - | optional |" in text
    assert "| route | default | 3.26 | 3 | 0.00 | required |" in text
    assert "Estimated routed FFN decode layer: 399.30 us" in text
    assert "- SwiGLU: 5.35 us (1.3%)" in text
    assert "shared 50.4%" in text


def test_missing_rows_prevent_the_estimate() -> None:
    us = {k: v for k, v in PASSING_US.items() if k != "route"}
    text = render_evidence_summary(_report(us))
    section = text.split("## Estimated Routed FFN Decode Cost", 1)[1].split("## Gates")[0]
    assert section.strip() == "Missing rows prevented the per-layer estimate."
    assert "error: missing Phase E MoE gate rows: route" in text


def test_decisions_table_details_and_review_messages() -> None:
    text = render_evidence_summary(_report({**PASSING_US, "ffn_q3_down_merged_shexp": 868.59}))
    decisions = text.split("## Decisions", 1)[1]
    assert "| `moe_merged_shared_gate_up` | needs-parity |" in decisions
    assert "| `q2_K_routed_down` | keep-evidence-gated |" in decisions
    assert "- **revisit disabled merged shared-expert policy (point estimate 1.321x > 1.02)**" \
        in decisions
    assert "- missing: parity (test-backend-ops test mode) for:" in decisions
    assert "- `decode` not decided: none of its Phase D rows are present" in decisions


def test_package_rule_section() -> None:
    check = PackageCheck(rule="q2_K routed down: NextN rule", package="pkg", status="failed",
                         messages=["blk.78.ffn_down_exps.weight is q2_K"])
    text = render_evidence_summary(_report(PASSING_US, package_check=check))
    assert "## Package Rule" in text
    assert "q2_K routed down: NextN rule: **failed** (`pkg`)" in text
