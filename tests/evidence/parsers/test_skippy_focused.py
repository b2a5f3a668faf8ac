"""focused-runtime-report.json (spec section 2); fixtures derived by hand from the spec."""

from __future__ import annotations

import json
from pathlib import Path

from meshcert.evidence.ingest import ingest_files
from tests.evidence.parsers.helpers import DATA, ingest, refusal, values


def test_an_executed_report_gives_its_timings_and_setup() -> None:
    result = ingest("focused-runtime-report.json")
    got = values(result)
    assert got["startup_elapsed_ms"] == (2100.0, "ms", "/summary/startup_elapsed_ms")
    assert got["generated_tokens_per_second"] == (
        78.8, "tok/s", "/throughput_tokens_per_second/generated")
    params = result.table.iloc[0]["params"]
    assert "scenario=first-token" in params and "stage_count=2" in params
    assert "hosts=[a,b]" in params


def test_schema_smoke_is_refused() -> None:
    rows, kind, reason = refusal(ingest("focused-schema-smoke.json"))
    assert (rows, kind) == (0, "rejected")
    assert reason.startswith("not evidence: focused runtime report with mode='schema-smoke'")


def test_a_unit_that_contradicts_the_field_is_a_finding(tmp_path: Path) -> None:
    doc = json.loads((DATA / "focused-runtime-report.json").read_text())
    doc["latency_ms"] = {"unit": "s", "ttft_ms": 0.073}
    path = tmp_path / "focused.json"
    path.write_text(json.dumps(doc))
    result = ingest_files([path])
    assert [(p.line, p.reason) for p in result.problems] == [
        (1, "ttft_ms is in ms by its name but the file says unit 's' (at /latency_ms/ttft_ms)")]
    assert "ttft_ms" not in set(result.table.metric)
