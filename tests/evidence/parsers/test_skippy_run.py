"""skippy-bench driver-result.json (spec section 1); fixture derived by hand from the spec."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from meshcert.evidence.ingest import ingest_files
from tests.evidence.parsers.helpers import DATA, ingest, values


def test_summary_and_prompts_with_their_units_pointers_and_setup() -> None:
    result = ingest("run-1/driver-result.json")
    assert result.problems == [] and result.sources[0].format == "skippy-run"
    got = values(result)
    assert got["ttft_ms_p50"] == (88.0, "ms", "/summary/ttft_ms_p50")
    assert got["generated_tokens_per_second"] == (41.7, "tok/s",
                                                  "/summary/generated_tokens_per_second")
    rows = result.table
    prompt = rows[(rows.op == "skippy-bench run prompt") & (rows.metric == "ttft_ms")]
    assert list(prompt["value"]) == [88.0, 95.0] and list(prompt["sample"]) == [1, 2]
    assert prompt.iloc[1]["extra"]["pointer"] == "/results/1/ttft_ms"
    setup = rows.iloc[0]["param_dict"]
    assert setup["model_id"] == "qwen3-8b" and setup["source_revision"] == "abc123"
    assert setup["topology_id"] == "two-host" and setup["stage_count"] == 2
    assert setup["cache_type_k"] == "q8_0" and setup["ctx_size"] == "8192"
    assert setup["stages"] == ("a:0-18", "b:18-36") and setup["max_new_tokens"] == 32


def test_unbalanced_stages_are_not_lab_evidence(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(DATA / "run-1", run)
    plan = json.loads((run / "deployment-plan.json").read_text())
    plan["stages"][0]["layer_end"] = 10
    plan["stages"][1]["layer_start"] = 10
    (run / "deployment-plan.json").write_text(json.dumps(plan))
    result = ingest_files([run / "driver-result.json"])
    assert result.row_count == 0
    assert result.problems[0].kind == "rejected"
    assert "stage layer counts 10/26 differ by more than one" in result.problems[0].reason


def test_a_debug_serving_binary_is_refused(tmp_path: Path) -> None:
    doc = json.loads((DATA / "run-1/driver-result.json").read_text())
    doc["command"] = ["/src/mesh/target/debug/skippy-server", "--port", "1"]
    path = tmp_path / "driver-result.json"
    path.write_text(json.dumps(doc))
    result = ingest_files([path])
    assert result.row_count == 0 and result.problems[0].kind == "rejected"
    assert "target/debug/skippy-server is a debug build" in result.problems[0].reason


def test_truncated_negative_and_nonfinite_values_are_findings(tmp_path: Path) -> None:
    text = (DATA / "run-1/driver-result.json").read_text()
    (tmp_path / "cut.json").write_text(text[:200])
    (tmp_path / "nan.json").write_text(text.replace('"ttft_ms_p95": 95', '"ttft_ms_p95": NaN'))
    (tmp_path / "neg.json").write_text(text.replace('"ttft_ms_p50": 88', '"ttft_ms_p50": -88'))
    cut = ingest_files([tmp_path / "cut.json"])
    assert cut.row_count == 0 and "truncated JSON" in cut.problems[0].reason
    nan = ingest_files([tmp_path / "nan.json"])
    assert nan.row_count == 0 and nan.problems[0].line == 3
    assert "non-finite number NaN" in nan.problems[0].reason
    neg = ingest_files([tmp_path / "neg.json"])
    (problem,) = neg.problems
    assert "ttft_ms_p50 = -88 ms is a negative duration (at /summary/ttft_ms_p50)" in \
        problem.reason
    assert "ttft_ms_p50" not in set(neg.table[neg.table.op == "skippy-bench run"].metric)
