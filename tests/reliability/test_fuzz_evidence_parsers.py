"""Property-based fuzzing of every evidence parser with mutated REAL lines.

The inputs are the realistic logs in tests/evidence/samples/ (test-backend-ops console and
SQL output, ggml_test lines, llama-bench json/jsonl/csv/sql, llama-perplexity logs) and an
evidence JSON written by meshcert itself. Hypothesis mutates them the way logs really break:
numbers turned into `1.2.3`, `nan`, `1e999`; lines cut, joined, split, duplicated, dropped or
swapped; ANSI colour codes, NUL bytes, quotes, brackets and markers of other formats pasted
in; whole files cut short, CRLF, a BOM.

Properties:
- every parser returns a ParsedFile (no exception escapes) whose batches are rectangular and
  whose problems point into the file (line numbers within it);
- a corrupted measurement line never vanishes silently: it still gives a row or a problem;
- `ingest_texts` (detect + parse + table) returns a result with the table's columns, for any
  mix of mutated files and arbitrary text;
- the evidence JSON reader survives mutated documents (wrong types anywhere).
Fixed seed (derandomize) and budget, no example database: CI runs the same cases every time.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meshcert.evidence.ingest import evidence_json_text, ingest_texts
from meshcert.evidence.parsers import (
    PARSERS,
    ParsedFile,
    ab_comparison,
    competitive,
    detect,
    ggml_test,
    llama_bench,
    metrics_server,
    perf_history,
    perplexity,
    skippy_eval,
    skippy_focused,
    skippy_local,
    skippy_run,
    spec_bench,
    tbo_console,
    tbo_sql,
    token_lengths,
)
from meshcert.evidence.parsers import evidence_json as ej
from meshcert.evidence.table import COLUMNS

SAMPLES = Path(__file__).resolve().parents[1] / "evidence" / "samples"
# mesh-llm's formats (skippy-bench and its automation): hand-derived from the spec, see that
# folder's README
MESH = Path(__file__).resolve().parents[1] / "evidence" / "data" / "mesh"
EXAMPLES = 200
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

Parse = Callable[[str, str], ParsedFile]


def _read(*names: str) -> list[tuple[str, str]]:
    return [(name, (SAMPLES / name).read_text(encoding="utf-8")) for name in names]


def _mesh(*names: str) -> list[tuple[str, str]]:
    """Admitted mesh-llm files, named by their real path (a driver result reads its siblings)."""
    return [(str(MESH / name), (MESH / name).read_text(encoding="utf-8")) for name in names]


def _ggml_lines() -> list[tuple[str, str]]:
    """The `ggml_test:` lines of the console samples, as a file of their own."""
    lines = [line[line.index("ggml_test:"):] for _, text in _read(
        "phase-e-perf.console.log", "fixed-block-dispatch/glm-down-default.console.log",
        "fixed-block-dispatch/glm-down-disabled.console.log")
        for line in text.split("\n") if "ggml_test:" in line]
    assert len(lines) >= 5, "the samples lost their ggml_test lines"
    return [("ggml-test-lines.log", "\n".join(lines) + "\n")]


CONSOLE = ("phase-e-perf.console.log", "phase-e-parity.console.log",
           "kernel-sweep/mul-mm-id-min-1.console.log",
           "kernel-sweep/q3-k-mul-mv-id-nsg-4.console.log",
           "fixed-block-dispatch/glm-down-default.console.log")
PARSER_CORPUS: dict[str, tuple[Parse, Callable[[], list[tuple[str, str]]]]] = {
    "tbo_console": (tbo_console.parse, lambda: _read(*CONSOLE)),
    "tbo_sql": (tbo_sql.parse, lambda: _read("phase-e-perf.sql", "older-build.sql")),
    "tbo_csv": (tbo_sql.reject_csv, lambda: _read("tbo-output.csv")),
    "ggml_test": (ggml_test.parse, _ggml_lines),
    "llama_bench": (llama_bench.parse, lambda: _read(
        "llama-bench.json", "llama-bench.jsonl", "llama-bench.csv", "llama-bench.sql")),
    "perplexity": (perplexity.parse, lambda: _read("ppl-q3_K.log",
                                                   "kld-q2_K-routed-down.log")),
    "skippy_run": (skippy_run.parse, lambda: _mesh("run-1/driver-result.json")),
    "skippy_focused": (skippy_focused.parse, lambda: _mesh("focused-runtime-report.json")),
    "skippy_local": (skippy_local.parse, lambda: _mesh("local-single.json",
                                                       "local-split-compare.json")),
    "skippy_eval": (skippy_eval.parse, lambda: _mesh("eval-run.json", "speed-bench.json")),
    "spec_bench": (spec_bench.parse, lambda: _mesh("spec-bench.json", "dflash/spec-bench.json")),
    "metrics_server": (metrics_server.parse, lambda: _mesh("metrics-report.json")),
    "competitive_report": (competitive.parse_report, lambda: _mesh("competitive-report.json")),
    "competitive_promotion": (competitive.parse_promotion, lambda: _mesh("promotion.json")),
    "perf_history": (perf_history.parse, lambda: _mesh("history.jsonl")),
    "ab_comparison": (ab_comparison.parse, lambda: _mesh("comparison-adaptive.json")),
    "token_lengths": (token_lengths.parse, lambda: _mesh("token-lengths.json")),
}


@cache
def corpus(parser: str) -> list[tuple[str, str]]:
    return PARSER_CORPUS[parser][1]()


@cache
def every_sample() -> list[tuple[str, str]]:
    return [item for name in PARSER_CORPUS for item in corpus(name)]


@cache
def evidence_document() -> str:
    """A real evidence JSON: what meshcert writes for a few of the samples."""
    return evidence_json_text(ingest_texts(dict(_read(
        "phase-e-perf.console.log", "phase-e-parity.console.log", "llama-bench.jsonl",
        "ppl-q3_K.log"))))


# -- mutations -------------------------------------------------------------------------------
NASTY_NUMBERS = ["1.2.3", ".", "-", "+", "1e", "1e999", "-1e999", "nan", "-nan", "inf", "-0",
                 "00", "1_000", "0x1F", "9" * 30, "", "\u0663", "\uff11\uff12", "1,5", "--1"]
NASTY_TEXT = ["\x1b[1;31m", "\x1b[0m", "\x1b]0;title\x07", "\x00", "\r", "\t", "'", "''", '"',
              "\\", "(", ")", "[", "]", ",", "=", ":", " - ", "\u00b1", "\u0394p", "\u00b5",
              "\ufeff", "\u2028", "ggml_test:", " us/run", " runs -", "OK", "FAIL",
              "INSERT INTO", "NULL", "{", "}", "Backend 1/1: X", "Final estimate: PPL = ",
              " not supported", "/", "%"]
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _nasty_number(draw: st.DrawFn) -> str:
    return draw(st.sampled_from(NASTY_NUMBERS) | st.text(alphabet="0123456789.-+eE",
                                                         max_size=6))


def _replace_number(draw: st.DrawFn, line: str) -> str:
    numbers = list(_NUMBER.finditer(line))
    if not numbers:
        return line
    m = draw(st.sampled_from(numbers))
    return line[:m.start()] + _nasty_number(draw) + line[m.end():]


OPS = ("number", "cut", "insert", "delete", "dup", "drop", "swap", "join", "split", "blank")


def _mutate_lines(draw: st.DrawFn, lines: list[str]) -> list[str]:
    if not lines:
        return lines
    op = draw(st.sampled_from(OPS))
    i = draw(st.integers(0, len(lines) - 1))
    line = lines[i]
    at = draw(st.integers(0, len(line)))
    if op == "number":
        lines[i] = _replace_number(draw, line)
    elif op == "cut":
        lines[i] = line[:at]
    elif op == "insert":
        lines[i] = line[:at] + draw(st.sampled_from(NASTY_TEXT) | st.text(max_size=4)) + line[at:]
    elif op == "delete":
        lines[i] = line[:at] + line[at + draw(st.integers(1, 12)):]
    elif op == "dup":
        lines.insert(i, line)
    elif op == "drop":
        del lines[i]
    elif op == "swap":
        j = draw(st.integers(0, len(lines) - 1))
        lines[i], lines[j] = lines[j], lines[i]
    elif op == "join" and i + 1 < len(lines):
        lines[i:i + 2] = [line + lines[i + 1]]
    elif op == "split":
        lines[i:i + 1] = [line[:at], line[at:]]
    elif op == "blank":
        lines[i] = " " * draw(st.integers(0, 3))
    return lines


@st.composite
def mutated(draw: st.DrawFn, samples: list[tuple[str, str]]) -> tuple[str, str]:
    """(name, text): one sample with 1-6 line mutations, maybe cut short, CRLF or a BOM."""
    name, text = draw(st.sampled_from(samples))
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 6))):
        lines = _mutate_lines(draw, lines)
    out = "\n".join(lines)
    if draw(st.booleans()) and draw(st.booleans()):
        out = out[:draw(st.integers(0, len(out)))]
    if draw(st.integers(0, 7)) == 0:
        out = out.replace("\n", "\r\n")
    if draw(st.integers(0, 7)) == 0:
        out = "\ufeff" + out
    return name, out


def check_parsed(parsed: object, source: str, text: str) -> ParsedFile:
    assert isinstance(parsed, ParsedFile)
    n_lines = text.count("\n") + 1
    for batch in parsed.batches:
        lengths = {len(v) for v in batch.values()}
        assert len(lengths) <= 1, "a ragged batch"
    for problem in parsed.problems:
        assert problem.file == source
        assert problem.line is None or 1 <= problem.line <= n_lines, problem
        assert problem.reason
    for row in parsed.rows:
        assert 1 <= row.source_line <= n_lines, row
    assert parsed.row_count >= 0 and parsed.ignored >= 0
    return parsed


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _values(line: str) -> list[re.Match[str]]:
    """The numbers of a line, except those inside ANSI colour codes (not measurements)."""
    codes = [m.span() for m in _ANSI.finditer(line)]
    return [m for m in _NUMBER.finditer(line)
            if not any(a <= m.start() < b for a, b in codes)]


def _row_lines(parsed: ParsedFile) -> set[int]:
    lines = {row.source_line for row in parsed.rows}
    for batch in parsed.batches:
        column = batch["source_line"]
        values = column if isinstance(column, Sequence) else [getattr(column, "value", 0)]
        lines.update(int(x) for x in values)
    return lines


# -- the properties --------------------------------------------------------------------------
@pytest.mark.parametrize("parser", sorted(PARSER_CORPUS))
@FUZZ
@given(data=st.data())
def test_each_parser_survives_mutated_real_lines(parser: str, data: st.DataObject) -> None:
    parse = PARSER_CORPUS[parser][0]
    name, text = data.draw(mutated(corpus(parser)), label="input")
    check_parsed(parse(text, name), name, text)


@pytest.mark.parametrize("parser", sorted(set(PARSER_CORPUS) - {"tbo_csv"}))
@FUZZ
@given(data=st.data())
def test_a_corrupted_measurement_line_becomes_a_row_or_a_problem(
        parser: str, data: st.DataObject) -> None:
    """Corrupt a number on a line that gave a row: that line is still accounted for (a row or
    a problem at it), or the file reports some problem. Nothing vanishes silently."""
    parse = PARSER_CORPUS[parser][0]
    name, text = data.draw(st.sampled_from(corpus(parser)), label="sample")
    lines = text.split("\n")
    row_lines = sorted(n for n in _row_lines(parse(text, name)) if _values(lines[n - 1]))
    if not row_lines:
        return
    target = data.draw(st.sampled_from(row_lines), label="line")
    bad = data.draw(st.sampled_from(["1.2.3", "x", "..", "1e", "nan%", "--"]), label="bad")
    m = data.draw(st.sampled_from(_values(lines[target - 1])), label="which number")
    lines[target - 1] = lines[target - 1][:m.start()] + bad + lines[target - 1][m.end():]
    mutated_text = "\n".join(lines)
    parsed = check_parsed(parse(mutated_text, name), name, mutated_text)
    at_line = target in _row_lines(parsed) or any(p.line == target for p in parsed.problems)
    assert at_line or parsed.problems, f"line {target} vanished: {lines[target - 1]!r}"


@FUZZ
@given(data=st.data())
def test_detect_and_ingest_survive_any_mix(data: st.DataObject) -> None:
    files = data.draw(st.lists(mutated(every_sample()), min_size=1, max_size=3), label="files")
    if data.draw(st.booleans()):
        files.append((data.draw(st.sampled_from(["x.log", "y.sql", "z.csv", "w.json", "v"])),
                      data.draw(st.text(max_size=200))))
    named = [(f"{i}-{name}", text) for i, (name, text) in enumerate(files)]
    for name, text in named:
        assert isinstance(detect(text, name), str)
    result = ingest_texts(named)
    assert tuple(result.table.columns) == COLUMNS
    assert {p.file for p in result.problems} <= {name for name, _ in named}
    assert len(result.sources) <= len(named)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**66), 2**66) | st.floats(allow_nan=False)
    | st.text(max_size=8), lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=6)


def _json_paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _json_paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _json_paths(v, (*prefix, i))
    return out


@FUZZ
@given(data=st.data())
def test_evidence_json_survives_mutated_documents(data: st.DataObject) -> None:
    doc = json.loads(evidence_document())
    for _ in range(data.draw(st.integers(1, 4))):
        path = data.draw(st.sampled_from(_json_paths(doc)))
        if not path:
            doc = data.draw(JSON_VALUES)
            break
        parent = doc
        for key in path[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(JSON_VALUES)
        if not isinstance(doc, dict | list):
            break
    text = json.dumps(doc) if data.draw(st.integers(0, 4)) else json.dumps(doc)[:-3]
    parsed = ej.parse(text, "fuzz.json", COLUMNS)
    assert isinstance(parsed, ej.EvidenceDocument)
    assert set(parsed.columns) == set(COLUMNS)
    assert len({len(v) for v in parsed.columns.values()}) == 1
    result = ingest_texts([("fuzz.json", text), ("extra.log", copy.copy(text[:50]))])
    assert tuple(result.table.columns) == COLUMNS


def test_every_registered_parser_is_fuzzed() -> None:
    """A parser added to meshcert.evidence.parsers.PARSERS must get a corpus here."""
    fuzzed = {id(parse) for parse, _ in PARSER_CORPUS.values()}
    missing = [fmt for fmt, parse in PARSERS.items() if id(parse) not in fuzzed]
    assert not missing, f"add samples for {missing} to PARSER_CORPUS"


def test_the_unmutated_samples_parse_cleanly() -> None:
    """The corpus is realistic: each sample gives rows (the csv: its rejection)."""
    for parser, (parse, _) in PARSER_CORPUS.items():
        for name, text in corpus(parser):
            parsed = check_parsed(parse(text, name), name, text)
            assert parsed.row_count or parser == "tbo_csv", (parser, name, parsed.problems)
