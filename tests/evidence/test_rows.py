"""The evidence rows before pandas: the counts the ingest summary shows, read without building
the DataFrame, equal what pandas counts on the DataFrame; the DataFrame is built once."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from meshcert.evidence.ingest import IngestResult, evidence_json_text, ingest_files, ingest_texts
from meshcert.evidence.parsers import tbo_console
from meshcert.evidence.rows import EvidenceRows, RowCounts
from tests.evidence.samples import SAMPLES, numbers_gb, perf_log, prefix, row, text

ALL_SAMPLES = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix != ".py"
                     and "__pycache__" not in p.parts)


def pandas_counts(table: pd.DataFrame) -> RowCounts:
    """What the summary counted on the DataFrame before: value_counts and groupby."""
    by_run: dict[str, dict[str, int]] = {}
    if len(table):
        for (run_id, kind), n in table.groupby(["run_id", "kind"], sort=False).size().items():
            by_run.setdefault(str(run_id), {})[str(kind)] = int(n)
    return RowCounts({str(k): int(v) for k, v in table["format"].value_counts().items()},
                     {str(k): int(v) for k, v in table["kind"].value_counts().items()}, by_run)


def in_order(counts: RowCounts) -> list[list[tuple[str, object]]]:
    """The counts with their order (dict equality ignores it)."""
    return [list(counts.by_format.items()), list(counts.by_kind.items()),
            [(run, list(kinds.items())) for run, kinds in counts.kinds_by_run.items()]]


def assert_counts_match(result: IngestResult) -> None:
    counts = result.rows.counts                 # first: read off the kept rows, no DataFrame
    table = result.table
    assert in_order(counts) == in_order(pandas_counts(table))
    assert in_order(EvidenceRows.of_table(table).counts) == in_order(counts)
    assert len(result.rows) == result.row_count == len(table)


def test_counts_match_pandas_on_every_sample() -> None:
    assert_counts_match(ingest_files(ALL_SAMPLES))
    for path in ALL_SAMPLES:
        assert_counts_match(ingest_files([path]))


def test_counts_follow_line_order_when_parsers_emit_out_of_order() -> None:
    """Perf rows before a test row in the file, but the bulk perf batch after the test row in
    the parser's output: kinds per run come in line order, as in the table."""
    log = "\n".join([
        "Testing 1 devices", "Backend 1/1: Metal",
        row("ADD", "type=f32", numbers_gb(10, 1.0, 1, 1.0)),
        row("ADD", "type=f16", numbers_gb(10, 2.0, 1, 1.0)),
        prefix("ADD", "type=f32") + "OK", ""])
    parsed = tbo_console.parse(log, "run.console.log")
    assert [r.kind for r in parsed.rows] == ["parity"]      # the batch of perf rows follows
    assert parsed.batches and parsed.batches[0]["source_line"] == [3, 4]
    result = ingest_texts({"run.console.log": log})
    assert list(result.rows_by_kind_per_source()[0]) == ["perf", "parity"]
    assert list(result.rows_by_kind()) == ["perf", "parity"]
    assert_counts_match(ingest_texts({"run.console.log": log}))


def test_counts_of_merged_evidence_json_leave_out_dropped_runs_and_missing_kinds(
        tmp_path: Path) -> None:
    first = ingest_files([SAMPLES / "phase-e-perf.console.log", SAMPLES / "ppl-q3_K.log"])
    doc = json.loads(evidence_json_text(first))
    doc["rows"][0]["kind"] = None                          # a hand-edited file
    doc["rows"][1]["format"] = None
    saved = tmp_path / "evidence.json"
    saved.write_text(json.dumps(doc), encoding="utf-8")
    merged = ingest_files([SAMPLES / "llama-bench.json", saved, SAMPLES / "ppl-q3_K.log",
                           SAMPLES / "phase-e-parity.console.log"])
    assert [p.kind for p in merged.problems].count("duplicate") == 1
    assert_counts_match(merged)


def test_counts_of_a_large_log_with_sections() -> None:
    rows = [row("ADD", f"type=f32,n={i}", numbers_gb(10, 1.0 + i, 1, 1.0)) for i in range(80)]
    log = (perf_log(rows, backend="Metal") + perf_log(rows[::-1], backend="CUDA0", device="RTX")
           + text("phase-e-perf.console.log"))
    assert_counts_match(ingest_texts({"big.console.log": log}))


def test_table_is_built_once_from_the_kept_rows() -> None:
    result = ingest_files([SAMPLES / "phase-e-perf.console.log"])
    table = result.table
    assert result.table is table
    assert len(table) == result.row_count > 0


def test_empty_ingest_counts_nothing() -> None:
    result = ingest_texts({})
    assert (result.row_count, result.rows_by_format(), result.rows_by_kind()) == (0, {}, {})
    assert len(result.table) == 0
