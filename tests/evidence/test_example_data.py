"""The bundled example: constructed from the published GLM-5.2 Metal means, honestly."""

from __future__ import annotations

import hashlib
from pathlib import Path

from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.demo import run_demo
from meshcert.evidence import ingest_files
from meshcert.evidence.build import BuildOptions, build_report
from meshcert.evidence.decisions import DecisionOptions
from meshcert.evidence.examplegen import CSV_NAME, DATA_DIR, PROVENANCE, example_files, generate
from tests.evidence.gate_logs import settings

PUBLISHED_CSV_SHA256 = "669ba5ebebae5fb9cbede8cc60319e43d69d4d52bf90f40b959ff334b497bb0a"
SHARED_CSV = Path("/work/shared/data/glm52-metal-headline.csv")
TRIPWIRE = ("error: combined FFN q3_K / q3_K merged shared gate/up speedup 1.321x is above "
            "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP=1.02: revisit disabled merged "
            "shared-expert policy")
MISSING = ("error: missing Phase E MoE gate rows: routed q2_K gate/up, routed q3_K down, "
           "routed q2_K down, small routed fused whole graph, shared q3_K fused GLU, "
           "shared q2_K fused GLU, combined FFN q2_K weighted down")


def test_the_csv_is_the_published_copy() -> None:
    data = (DATA_DIR / CSV_NAME).read_bytes()
    assert hashlib.sha256(data).hexdigest() == PUBLISHED_CSV_SHA256
    if SHARED_CSV.is_file():
        assert data == SHARED_CSV.read_bytes()


def test_bundled_files_are_what_the_generator_writes() -> None:
    """Regenerate with `python3 scripts/generate.py example-evidence`."""
    expected = generate((DATA_DIR / CSV_NAME).read_text(encoding="utf-8"))
    on_disk = {str(p.relative_to(DATA_DIR)): p.read_text(encoding="utf-8")
               for p in example_files()}
    assert on_disk == expected
    assert all(PROVENANCE in text for text in expected.values())
    assert generate((DATA_DIR / CSV_NAME).read_text(encoding="utf-8")) == expected


def test_ranges_and_derived_rows_are_left_out_and_said_so() -> None:
    console = (DATA_DIR / "glm52-metal-headline.console.log").read_text()
    assert "# omitted: q3_K down nr0=1 and nr0=2 = 195-196 us (published only as a range)" \
        in console
    assert "# omitted: estimated routed FFN decode layer = 391.13 us (derived" in console
    assert "nb=4..16" not in (DATA_DIR / "glm52-metal-headline.sql").read_text()


def test_example_ingests_cleanly_with_one_sample_per_row() -> None:
    result = ingest_files(example_files())
    assert result.problems == []
    report = build_report(result.table, settings=settings(),
                          options=BuildOptions(decisions=DecisionOptions(replicates=1000)),
                          sources=result.sources)
    by_label = {c.label: c for c in report.components}
    assert by_label["ffn_q3_down"].n == 1 and by_label["ffn_q3_down"].median_us == 1147.21
    assert by_label["routed_swiglu_fused"].n == 2  # 5.35 and the combined run's 5.09
    assert by_label["sweep_mul_mm_id"].median_us == 860.96
    assert {d.verdict for d in report.decisions} == {"inconclusive"}
    assert [o.policy for o in report.omitted_decisions] == ["short_prefill"]
    merged = next(d for d in report.decisions if d.policy == "moe_merged_shared_gate_up")
    assert merged.review_required
    assert merged.messages == ["revisit disabled merged shared-expert policy (point estimate "
                               "1.321x > 1.02)"]


def test_example_exits_2_on_the_merged_shared_tripwire_with_gates_required() -> None:
    files = [str(p) for p in example_files()]
    runner = CliRunner()
    result = runner.invoke(app, ["evidence", "gate", *files],
                           env={"GLM52_PHASE_E_REQUIRE_GATES": "1"})
    assert result.exit_code == 2
    assert [line for line in result.stderr.splitlines() if line] == [MISSING, TRIPWIRE]
    advisory = runner.invoke(app, ["evidence", "gate", *files])
    assert advisory.exit_code == 0 and advisory.stderr == ""


def test_demo_writes_the_example_evidence(tmp_path: Path) -> None:
    result = run_demo(tmp_path / "demo")
    decisions = tmp_path / "demo" / "evidence" / "decisions.json"
    assert result.outputs["evidence decisions (JSON)"] == decisions
    assert result.outputs["evidence summary (Markdown)"].is_file()
    assert result.evidence_report is not None
    assert {d.verdict for d in result.evidence_report.decisions} == {"inconclusive"}
