"""Ingestion as a whole: detection, variants, repeated runs, provenance, problems, JSON."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from meshcert.evidence import (
    COLUMNS,
    DTYPES,
    empty_table,
    ingest,
    ingest_files,
    ingest_texts,
    read_evidence_json,
    write_evidence_json,
)
from meshcert.evidence.ingest import variant_for
from meshcert.evidence.parsers import detect
from meshcert.evidence.parsers.base import DUPLICATE, REJECTED, UNKNOWN_LINE, UNREADABLE
from tests.evidence.samples import SAMPLES, ffn, numbers_flops, perf_log, row, text

ALL_SAMPLES = sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix != ".py"
                     and "__pycache__" not in p.parts)

EXPECTED_FORMAT = {
    "phase-e-perf.console.log": "tbo-console", "phase-e-parity.console.log": "tbo-console",
    "glm-down-default.console.log": "tbo-console", "glm-down-disabled.console.log":
    "tbo-console", "q3-k-mul-mv-id-nsg-4.console.log": "tbo-console",
    "mul-mm-id-min-1.console.log": "tbo-console", "phase-e-perf.sql": "tbo-sql",
    "older-build.sql": "tbo-sql", "tbo-output.csv": "tbo-csv", "llama-bench.json":
    "llama-bench", "llama-bench.jsonl": "llama-bench", "llama-bench.csv": "llama-bench",
    "llama-bench.sql": "llama-bench", "ppl-q3_K.log": "perplexity",
    "kld-q2_K-routed-down.log": "perplexity", "llama-bench-md-pasted.txt": "llama-bench",
    "tbo-test-ctest-caret.log": "tbo-console",
}


@pytest.mark.parametrize("path", ALL_SAMPLES, ids=lambda p: p.name)
def test_format_is_detected_from_content(path: Path) -> None:
    content = path.read_text(encoding="utf-8")
    assert detect(content, "no-extension") == EXPECTED_FORMAT[path.name]


def test_detect_edge_cases() -> None:
    assert detect("ggml_test: perf_sample op=A params= sample=1/1 runs=1 avg_us=1\n") \
        == "ggml-test"
    assert detect('{"schema": "meshcert.evidence", "version": 1}') == "evidence-json"
    assert detect("hello\n", "notes.txt") == "unknown"
    assert detect("", "run-3.console.log") == "tbo-console"


def test_all_samples_ingest_with_provenance() -> None:
    result = ingest_files(ALL_SAMPLES)
    assert [p.kind for p in result.problems] == [REJECTED]          # tbo-output.csv
    assert list(result.table.columns) == list(COLUMNS)
    assert {str(t) for t in result.table.dtypes} == set(DTYPES.values())
    assert len(result.sources) == len(ALL_SAMPLES)
    by_name = {Path(s.file).name: s for s in result.sources}
    perf = by_name["phase-e-perf.console.log"]
    assert perf.sha256 == __import__("hashlib").sha256(
        (SAMPLES / "phase-e-perf.console.log").read_bytes()).hexdigest()
    assert (perf.lines, perf.rows, perf.backends) == (47, 23, ["Metal"])
    assert perf.run_id == f"phase-e-perf.console.log@{perf.sha256[:12]}"
    assert by_name["phase-e-perf.sql"].build_commit == "8cf427ff"
    assert by_name["phase-e-parity.console.log"].format == "tbo-test"
    assert set(result.table["format"]) == {"tbo-console", "tbo-test", "tbo-sql", "ggml-test",
                                           "llama-bench", "perplexity"}
    counts = result.table.groupby("source_file").size()
    assert all(counts[s.file] == s.rows for s in result.sources if s.rows)


def test_variants_from_sweep_file_names_and_label() -> None:
    assert variant_for("logs/kernel-sweep/q3-k-mul-mv-id-nsg-4.console.log") == \
        "q3-k-mul-mv-id-nsg-4"
    assert variant_for("fixed-block-dispatch/glm-down-disabled.console.log") == \
        "glm-down-disabled"
    assert variant_for("out/run-3.console.log") == "default"
    assert variant_for("kernel-sweep/x.console.log", label="mine") == "mine"
    result = ingest_files([SAMPLES / "kernel-sweep" / "mul-mm-id-min-1.console.log",
                           SAMPLES / "phase-e-perf.console.log"])
    assert set(result.table["variant"]) == {"mul-mm-id-min-1", "default"}
    labelled = ingest_files([SAMPLES / "kernel-sweep" / "mul-mm-id-min-1.console.log"],
                            label="nsg-8")
    assert set(labelled.table["variant"]) == {"nsg-8"}


def repeated_runs(values: list[float]) -> dict[str, str]:
    return {f"out/run-{i + 1}.console.log": perf_log([
        row("GLM_FFN_CONSUMER", ffn("q3_K"), numbers_flops(872, us, 231.21, 201.5)),
        row("GLM_FFN_CONSUMER", ffn("q2_K"), numbers_flops(1224, us - 330, 226.49, 277.1))])
        for i, us in enumerate(values)}


def test_repeated_runs_are_samples_of_one_measurement() -> None:
    result = ingest_texts(repeated_runs([1147.21, 1150.02, 1145.80]))
    perf = result.table[result.table["kind"] == "perf"]
    q3 = perf[perf["param_dict"].map(lambda d: d["routed_down_type"] == "q3_K")]
    assert q3["us_per_run"].tolist() == [1147.21, 1150.02, 1145.80]
    assert q3["sample"].tolist() == [1, 2, 3]
    assert q3["run_id"].nunique() == 3 and set(q3["variant"]) == {"default"}
    assert q3.groupby(["backend", "op", "params", "variant"]).ngroups == 1


def test_duplicate_content_is_skipped(tmp_path: Path) -> None:
    first = tmp_path / "run-1.console.log"
    shutil.copy(SAMPLES / "phase-e-perf.console.log", first)
    copy = tmp_path / "run-2.console.log"
    shutil.copy(first, copy)
    result = ingest_files([first, copy])
    assert [(p.file, p.kind) for p in result.problems] == [(str(copy), DUPLICATE)]
    perf = result.table[result.table["kind"] == "perf"]
    assert len(result.sources) == 1 and perf["sample"].max() == 1


def test_unreadable_unknown_empty_binary_and_bad_utf8(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("just some notes\n")
    (tmp_path / "empty.console.log").write_text("")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02" * 10)
    bad = perf_log([row("ADD", "type=f32", numbers_flops(10, 1.0, 1.0, 1.0))]).encode()
    (tmp_path / "latin.console.log").write_bytes(bad.replace(b"Apple", b"App\xe9le"))
    names = ["missing.log", "notes.txt", "empty.console.log", "blob.bin", "latin.console.log"]
    result = ingest_files([tmp_path / n for n in names])
    kinds = {Path(p.file).name: (p.kind, p.line) for p in result.problems}
    assert kinds == {"missing.log": (UNREADABLE, None), "notes.txt": (UNKNOWN_LINE, None),
                     "empty.console.log": (UNKNOWN_LINE, None), "blob.bin": (UNREADABLE, None),
                     "latin.console.log": ("encoding", 1)}
    assert result.table["op"].tolist() == ["ADD"]


@pytest.mark.parametrize("numpy_from", [0, 1 << 62], ids=["numpy", "bytes.count"])
def test_line_count_is_the_same_counted_either_way(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, numpy_from: int) -> None:
    """Big files are counted by numpy when it is loaded (this process has it), else by
    bytes.count: the same `lines` (the text's line count), bad UTF-8 or not."""
    monkeypatch.setattr(ingest, "_NUMPY_COUNT_FROM", numpy_from)
    texts = {"end.console.log": b"a\nb\n", "open.console.log": b"a\n\nb",
             "bad.console.log": b"x\xe9\ny\n\xff", "one.console.log": b"\n"}
    for name, data in texts.items():
        (tmp_path / name).write_bytes(data)
    result = ingest_files([tmp_path / name for name in texts])
    lines = {Path(s.file).name: s.lines for s in result.sources}
    assert lines == {name: ingest._count_lines(data.decode("utf-8", errors="replace"))
                     for name, data in texts.items()}
    assert lines == {"end.console.log": 2, "open.console.log": 3, "bad.console.log": 3,
                     "one.console.log": 1}


def test_empty_table_has_every_column() -> None:
    table = empty_table()
    assert list(table.columns) == list(COLUMNS) and len(table) == 0
    assert {c: str(t) for c, t in table.dtypes.items()} == DTYPES
    assert len(ingest_texts({}).table) == 0


def assert_same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True))


def test_evidence_json_round_trip(tmp_path: Path) -> None:
    result = ingest_files(ALL_SAMPLES)
    out = write_evidence_json(result, tmp_path / "evidence.json", label=None)
    doc = json.loads(out.read_text())
    assert (doc["schema"], doc["version"], doc["tool"]["name"]) == ("meshcert.evidence", 1,
                                                                    "meshcert")
    assert doc["sources"][0]["sha256"] and doc["columns"] == list(COLUMNS)
    back = read_evidence_json(out)
    assert_same(back.table, result.table)
    assert back.sources == result.sources and back.problems == result.problems
    tuples = back.table["param_dict"].map(lambda d: d.get("ne")).dropna().tolist()
    assert tuples and all(isinstance(t, tuple) for t in tuples)
    again = ingest_files([out])              # the ingester reads its own output too
    assert_same(again.table, result.table)


def test_merging_evidence_json_with_new_runs(tmp_path: Path) -> None:
    runs = repeated_runs([1147.21, 1150.02, 1145.80])
    first = ingest_texts(dict(list(runs.items())[:2]))
    saved = write_evidence_json(first, tmp_path / "first.json")
    third = tmp_path / "run-3.console.log"
    third.write_text(runs["out/run-3.console.log"])
    merged = ingest_files([saved, third])
    assert merged.problems == []
    q3 = merged.table[(merged.table["kind"] == "perf")
                      & merged.table["params"].str.contains("routed_down_type=q3_K")]
    assert q3["sample"].tolist() == [1, 2, 3] and q3["run_id"].nunique() == 3
    dup = tmp_path / "run-1.console.log"
    dup.write_text(runs["out/run-1.console.log"])         # already inside first.json
    again = ingest_files([saved, dup])
    assert [p.kind for p in again.problems] == [DUPLICATE]
    assert len(again.table) == len(first.table)


def test_evidence_json_read_problems(tmp_path: Path) -> None:
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"schema": "meshcert.evidence", "version": 99, "rows": []}))
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "meshcert.evidence", "rows": [')
    for path in (other, broken):
        result = read_evidence_json(path)
        assert len(result.table) == 0 and result.problems[0].kind == REJECTED
    assert "newer" in read_evidence_json(other).problems[0].reason


def test_parser_output_matches_the_sample_text() -> None:
    """Every perf row's us/run appears on its line (or its result line) of the source."""
    result = ingest_files([SAMPLES / "phase-e-perf.console.log"])
    lines = text("phase-e-perf.console.log").split("\n")
    for rec in result.table[result.table["metric"] == "us_per_run"].to_dict("records"):
        line = rec["extra"].get("result_line", rec["source_line"])
        assert f"{rec['us_per_run']:.2f}" in lines[line - 1]
