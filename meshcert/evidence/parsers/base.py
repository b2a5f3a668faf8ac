"""What every parser returns: rows (one tuple per measurement), problems and file facts.

A parser is a pure function `parse(text, source) -> ParsedFile`. It never raises on bad input:
a line it cannot use becomes an `IngestProblem` (file, line, excerpt, reason) or, when it is
plain log chatter, one tick of `ParsedFile.ignored`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

# Row formats (the `format` column) and file formats (`SourceInfo.format`).
TBO_CONSOLE = "tbo-console"
TBO_TEST = "tbo-test"
TBO_SQL = "tbo-sql"
GGML_TEST = "ggml-test"
LLAMA_BENCH = "llama-bench"
PERPLEXITY = "perplexity"
EVIDENCE_JSON = "evidence-json"
TBO_CSV = "tbo-csv"          # file format only: detected, then rejected (no timing column)
UNKNOWN = "unknown"
# mesh-llm v0.79 formats (../shared/spec/bench-formats.md; one parser module each)
SKIPPY_RUN = "skippy-run"                  # skippy-bench run: driver-result.json
SKIPPY_FOCUSED = "skippy-focused"          # focused-runtime-report.json
SKIPPY_LOCAL = "skippy-local"              # local-single / local-split-compare
SKIPPY_EVAL = "skippy-eval"                # eval run.json / raw/speed-bench.json
SPEC_BENCH = "llama-spec-bench"            # llama-spec-bench --json (and DFlash stderr)
METRICS_SERVER = "metrics-server"          # metrics-server report.json / emit-fixture
COMPETITIVE = "competitive-report"         # competitive benchmark report.json
PROMOTION = "competitive-promotion"        # promotion.json
PERF_HISTORY = "perf-history"              # performance history JSONL
AB_COMPARISON = "ab-comparison"            # adaptive / mixed A/B comparison.json
TOKEN_LENGTHS = "token-lengths"            # skippy-bench token-lengths summary
MESH_FORMAT_NAMES = (SKIPPY_RUN, SKIPPY_FOCUSED, SKIPPY_LOCAL, SKIPPY_EVAL, SPEC_BENCH,
                METRICS_SERVER, COMPETITIVE, PROMOTION, PERF_HISTORY, AB_COMPARISON,
                TOKEN_LENGTHS)
FORMAT_NAMES = (TBO_CONSOLE, TBO_TEST, TBO_SQL, GGML_TEST, LLAMA_BENCH, PERPLEXITY, EVIDENCE_JSON,
           *MESH_FORMAT_NAMES)

# Row kinds (the `kind` column).
KINDS = ("perf", "perf_sample", "perf_warmup", "perf_summary", "perf_metadata", "parity",
         "parity_backend", "parity_total", "bench", "quality", "mesh_metric", "mesh_parity",
         "history", "ab_delta")

# Problem kinds.
MALFORMED = "malformed"      # looks like a row, does not parse
INCOMPLETE = "incomplete"    # a row that started but never got its result
UNKNOWN_LINE = "unknown"     # recognised family (e.g. `ggml_test:`), unknown member
REJECTED = "rejected"        # a whole file we will not use (e.g. test-backend-ops csv)
UNREADABLE = "unreadable"    # cannot read / decode the file
DUPLICATE = "duplicate"      # same bytes as a file already ingested
FLAGGED = "flagged"          # rows kept, but they carry a flag the spec names (e.g. a loss)


@dataclass(frozen=True)
class IngestProblem:
    """One thing the ingester could not use, with where it is."""

    file: str
    line: int | None
    excerpt: str
    reason: str
    kind: str = MALFORMED

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file


class Row(NamedTuple):
    """One row of the evidence table, minus the per-file columns (source_file, variant,
    run_id), which the table builder adds. Field order is the hot-path contract: the console
    parser builds these positionally."""

    source_line: int
    format: str
    kind: str
    backend: str | None = None
    device: str | None = None
    build_commit: str | None = None
    op: str = ""
    params: str = ""
    param_dict: dict[str, Any] = {}  # shared default: never mutate
    us_per_run: float | None = None
    runs: int | None = None
    sample: int | None = None
    supported: bool | None = None
    passed: bool | None = None
    nmse: float | None = None
    error: str | None = None
    metric: str | None = None
    value: float | None = None
    value_err: float | None = None
    extra: dict[str, Any] = {}  # shared default: never mutate


ROW_FIELDS: tuple[str, ...] = Row._fields
_ROW_DEFAULTS: dict[str, Any] = dict(Row._field_defaults)


@dataclass(frozen=True)
class Const:
    """A column of n equal values (None, a str, a bool...): cheap to hold and to build."""

    value: Any
    n: int

    def __len__(self) -> int:
        return self.n


Batch = dict[str, "Sequence[Any] | Const"]
"""Rows in columns: every name of ROW_FIELDS -> an equally long list or Const (fast path)."""


@dataclass
class ParsedFile:
    """A parser's answer for one file: rows as `Row` tuples and/or column batches, in any
    order (the table is sorted by line)."""

    format: str
    rows: list[Row] = field(default_factory=list)
    problems: list[IngestProblem] = field(default_factory=list)
    ignored: int = 0
    build_commit: str | None = None
    notes: dict[str, int] = field(default_factory=dict)
    batches: list[Batch] = field(default_factory=list)

    @property
    def row_count(self) -> int:
        return len(self.rows) + sum(len(b["source_line"]) for b in self.batches)

    def add_batch(self, n: int, columns: Mapping[str, Sequence[Any] | Const]) -> None:
        """Add n rows given some columns (lists or Const); the others get the Row defaults
        (as Const, except fresh dicts for param_dict / extra)."""
        if n == 0:
            return
        batch: Batch = {}
        for name in ROW_FIELDS:
            if name in columns:
                values = columns[name]
                if len(values) != n:
                    raise ValueError(f"column {name}: {len(values)} values for {n} rows")
                batch[name] = values
            elif name in ("param_dict", "extra"):
                batch[name] = [{} for _ in range(n)]      # never share a mutable default
            else:
                batch[name] = Const(_ROW_DEFAULTS.get(name), n)
        self.batches.append(batch)

    def sort_problems(self) -> None:
        """Problems in line order (bulk parsing may find them out of order)."""
        self.problems.sort(key=lambda p: p.line if p.line is not None else 0)

    def column_values(self, name: str) -> set[Any]:
        """The distinct values of one column over rows and batches."""
        values = {getattr(row, name) for row in self.rows}
        for batch in self.batches:
            column = batch[name]
            values.update({column.value} if isinstance(column, Const) else set(column))
        return values

    def problem(self, source: str, line: int | None, text: str, reason: str,
                kind: str = MALFORMED) -> None:
        self.problems.append(IngestProblem(source, line, excerpt(text), reason, kind))

    def note(self, name: str, count: int = 1) -> None:
        self.notes[name] = self.notes.get(name, 0) + count


_ANSI = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)|[@-Z\\-_])")
# a colour or erase-line code in caret notation, as a terminal copy or `cat -v` shows it:
# `^[[1;32mOK^[[0m` (only `^[[` + digits/semicolons + m or K: `^[A-Z]` in a regex is not one)
_CARET_CSI = re.compile(r"\^\[(?=\[[0-9;]*[mK])")


def caret_to_escape(text: str) -> str:
    """Caret-notation colour codes (`^[[0m`) turned into the ESC sequences they stand for, so
    a log copied from a terminal (`ctest -V`, `cat -v`) reads as the log itself."""
    return _CARET_CSI.sub("\x1b", text) if "^[[" in text else text


def strip_ansi(text: str) -> str:
    """Remove every ANSI escape (CSI colours, OSC titles, two-byte escapes) and caret-notation
    colour codes (`^[[1;32m`); never newlines."""
    text = caret_to_escape(text)
    return _ANSI.sub("", text) if "\x1b" in text else text


def excerpt(text: str, limit: int = 160) -> str:
    text = strip_ansi(text).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def to_float(text: str) -> float | None:
    """A float from log text (`nan`, `inf`, `-nan` included), None when it is not a number."""
    try:
        return float(text)
    except ValueError:
        return None


def line_of(text: str, offset: int) -> int:
    """1-based line number of a character offset."""
    return text.count("\n", 0, offset) + 1
