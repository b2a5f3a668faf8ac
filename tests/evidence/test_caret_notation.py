"""A test-backend-ops log copied from a terminal under `ctest -V` prints its colour codes in
caret notation (`^[[1;32mOK^[[0m`, two printable characters for ESC). It reads exactly as the
log with real ESC bytes: every row has its result, no row is called truncated."""

from __future__ import annotations

from pandas.testing import assert_frame_equal

from meshcert.evidence.ingest import ingest_texts
from meshcert.evidence.parsers.base import caret_to_escape, strip_ansi
from tests.evidence.samples import ESC, text

COLUMNS = ["kind", "op", "params", "backend", "passed", "us_per_run", "value", "source_line"]


def caret(log: str) -> str:
    return log.replace(ESC, "^[")


def test_ctest_copy_reads_every_result() -> None:
    result = ingest_texts({"tbo-test-ctest-caret.log": text("tbo-test-ctest-caret.log")})
    assert result.problems == []
    parity = result.table[result.table["kind"] == "parity"]
    assert list(zip(parity["op"], parity["passed"], strict=True)) == [
        ("ABS", True), ("ABS", True), ("SGN", True)]


def test_caret_parity_log_equals_the_escaped_one() -> None:
    real = text("phase-e-parity.console.log")
    assert ESC in real
    plain = ingest_texts({"real.log": real})
    copied = ingest_texts({"copied.log": caret(real)})
    assert copied.problems == plain.problems == []
    assert_frame_equal(copied.table[COLUMNS], plain.table[COLUMNS])
    assert copied.row_count == 11


def test_caret_perf_log_keeps_its_bandwidth() -> None:
    real = text("phase-e-perf.console.log")
    plain = ingest_texts({"real.log": real})
    copied = ingest_texts({"copied.log": caret(real)})
    assert [p.reason for p in copied.problems] == [p.reason for p in plain.problems]
    assert_frame_equal(copied.table[COLUMNS], plain.table[COLUMNS])
    assert copied.row_count == plain.row_count > 0


def test_strip_ansi_removes_both_notations_and_nothing_else() -> None:
    assert strip_ansi("^[[1;32mOK^[[0m") == "OK"
    assert strip_ansi(f"{ESC}[1;31mFAIL{ESC}[0m ^[[1;31mFAIL^[[0m") == "FAIL FAIL"
    # a regular expression in a command line is not a colour code
    assert caret_to_escape("-p ^[A-Z]+ and ^[[0-9]") == "-p ^[A-Z]+ and ^[[0-9]"


def test_json_text_is_never_rewritten() -> None:
    """`^[[` inside a JSON string is that text; turned into ESC it would break the JSON."""
    doc = ('[{"build_commit": "^[[0m", "model_filename": "m.gguf", "n_prompt": 512, '
           '"n_gen": 0, "avg_ts": 100.0, "stddev_ts": 1.0, "backends": "CPU"}]')
    result = ingest_texts({"llama-bench.json": doc})
    assert result.row_count > 0
    assert list(result.table["build_commit"]) == ["^[[0m"]
