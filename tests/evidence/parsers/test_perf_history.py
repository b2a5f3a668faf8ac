"""The performance history JSONL (spec section 8). Rows derived by hand from the spec
(tests/evidence/mesh_history.py), and the rows of mesh-llm's own compare test (the last test)."""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path

from meshcert.evidence.history import read_history
from meshcert.evidence.ingest import ingest_files
from meshcert.evidence.parsers.perf_history import cohort_key_of
from tests.evidence.mesh_history import generated_lines, jsonl, row, series
from tests.evidence.parsers.helpers import ingest


def test_rows_carry_the_cohort_and_its_provenance() -> None:
    result = ingest("history.jsonl")
    assert result.problems == [] and result.sources[0].format == "perf-history"
    table = result.table
    first = table[(table.source_line == 1) & (table.metric == "output_tokens_per_second")]
    rec = first.iloc[0]
    assert (rec["kind"], rec["value"], rec["extra"]["unit"]) == ("history", 400.0, "tok/s")
    assert rec["extra"]["source_sha"] == "mesh0000" and rec["extra"]["complete"] is True
    assert rec["param_dict"]["cohort_key"] == cohort_key_of(json.loads(
        (Path(result.sources[0].file)).read_text().split("\n")[0])["cohort"])


def test_one_bad_line_among_thousands_is_named_and_the_rest_ingested(tmp_path: Path) -> None:
    lines = [r.decode() for r in generated_lines(3000)]
    lines[1233] = lines[1233][:40] + "\n"                   # line 1234: cut short
    path = tmp_path / "history.jsonl"
    path.write_text("".join(lines))
    result = ingest_files([path])
    assert [(p.line, p.kind, p.reason) for p in result.problems] == [
        (1234, "malformed", "bad JSON line: Unterminated string starting at")]
    assert len(set(result.table.source_line)) == 2999


def test_refused_lines_name_their_flag(tmp_path: Path) -> None:
    good = row("aaaa", 1, 400.0, 180.0)
    schema3 = {**good, "schema_version": 3}
    forged = {**good, "cohort_key": "0" * 64}
    negative = {**row("bbbb", 2, 400.0, -1.0)}
    text = jsonl([good, schema3, forged, negative]) + '{"schema_version": 1, "x": Infinity}\n'
    path = tmp_path / "h.jsonl"
    path.write_text(text)
    problems = {p.line: p.reason for p in ingest_files([path]).problems}
    assert problems[2].startswith("not evidence: schema_version=3")
    assert "is not the SHA-256 of its cohort JSON" in problems[3]
    assert problems[4] == "ttft_ms_mean = -1 ms is a negative duration"
    assert problems[5] == "non-finite number Infinity"


def test_a_one_row_shard_may_be_pretty_json(tmp_path: Path) -> None:
    path = tmp_path / "shard.json"
    path.write_text(json.dumps(row("aaaa", 1, 400.0, 180.0), indent=2))
    assert ingest_files([path]).table.metric.tolist() == ["output_tokens_per_second",
                                                          "ttft_ms_mean"]
    assert read_history(path).rows == 1


def test_reading_is_streamed_in_bounded_memory() -> None:
    """The series keep a few numbers per row: the peak stays far below the file's size."""
    data = b"".join(generated_lines(20_000))
    tracemalloc.start()
    history = read_history(io.BytesIO(data), "gen.jsonl")
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert history.rows == 20_000 and not history.problems
    assert peak < len(data) / 4, (peak, len(data))


def test_series_helper_is_consistent() -> None:
    rows = series("mesh", [(1.0, 2.0)] * 2)
    assert rows[0]["cohort_key"] == rows[1]["cohort_key"]


def test_the_producers_three_baseline_fixture_classifies_as_mesh_llm_does(
        tmp_path: Path) -> None:
    """mesh-llm's own test `test_compare_requires_three_exact_cohort_baselines`
    (Mesh-LLM/mesh-llm scripts/tests/test_performance_history.py @79ff1138): a current run at
    80.0 tok/s over three baseline runs at 100.0, 101.0 and 99.0 of the same cohort (each its
    own source_sha, TTFT 500 ms) is a `performance-regression`; the same three under another
    cohort leave it `insufficient-baseline`. (Its `cohort_key: "different"` shortcut is a key
    that is not its cohort's SHA-256, which meshcert refuses by spec section 8, so the other
    cohort here differs in concurrency, with its own true key.)"""
    from meshcert.evidence.history_report import history_files

    cohort = {"platform": "cuda", "model": "qwen3", "arm": "mesh", "workload": "thoughtworks",
              "concurrency": 64, "config_sha256": "c" * 64, "hardware": {"name": "RTX 5080"}}

    def run(sha: str, tput: float, of: dict[str, object]) -> dict[str, object]:
        return {"schema_version": 1, "created_utc": "2026-09-01T00:00:00Z", "source_sha": sha,
                "cohort_key": cohort_key_of(of), "cohort": of, "complete": True,
                "output_tokens_per_second": tput, "ttft_ms_mean": 500.0}

    current = run("a" * 40, 80.0, cohort)
    same = [run(str(i) * 40, t, cohort) for i, t in enumerate((100.0, 101.0, 99.0))]
    other = {**cohort, "concurrency": 32}
    elsewhere = [run(str(i) * 40, t, other) for i, t in enumerate((100.0, 101.0, 99.0))]
    regressed = tmp_path / "same-cohort.jsonl"
    regressed.write_text(jsonl([*same, current]))
    alone = tmp_path / "other-cohort.jsonl"
    alone.write_text(jsonl([*elsewhere, current]))
    (verdict,) = history_files([str(regressed)]).report.history
    assert (verdict.history_class, verdict.baseline_n) == ("performance-regression", 3)
    verdicts = {v.cohort_key: v.history_class
                for v in history_files([str(alone)]).report.history}
    assert verdicts[cohort_key_of(cohort)] == "insufficient-baseline"
    assert verdicts[cohort_key_of(other)] == "insufficient-baseline"  # 2 runs before its last
