"""Parse accuracy against a corpus of real published output with expectations decided by
reading (tests/evidence/corpus/<name>.txt + <name>.json).

A sidecar names its source and lists, for the values a reader sees in the text:

    {"source": "https://github.com/ggml-org/llama.cpp/issues/8863",
     "tool": "test-backend-ops", "format": "tbo-console", "backends": ["CUDA0"],
     "expected": {"values": [{"at": "bs=[10,1],nr=[1,1]):", "kind": "perf",
                              "op": "MUL_MAT", "backend": "CUDA0", "value": 374.99}]},
     "expected_problems": [{"at": "bs=[10,1],nr=[2,1]):", "kind": "malformed"}]}

`at` is a piece of text found on exactly one line: that line is where the value (or problem)
is (or `line`: a number, null for the file as a whole; `problem_at`: where the problem that
flags a value is, when that is another line, e.g. the cut end of a JSON record). A value
entry may say `kind` (perf, parity, bench, quality), `op`, `backend` (null: the file names
none), `metric` (default by kind: us_per_run, avg_ts, ...), `value`, `value_err`, `passed`.
Every expected value is then one of:
- right: a row on that line with that metric has every stated field;
- flagged: no such row, and a problem names that file and line (or the whole file);
- silently wrong: a row with a different value/backend/op, or neither row nor problem.
Rows the parser extracted that no expectation names (on a metric the file's expectations
use) are silently wrong too: a value nobody asked for is a value nobody checked.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from meshcert.evidence.ingest import IngestResult, ingest_files

DEFAULT_METRIC = {"perf": "us_per_run", "bench": "avg_ts", "quality": "ppl", "parity": None}
_FIELDS = ("op", "backend", "value", "value_err", "passed")


@dataclass
class FileAccuracy:
    name: str
    format: str
    expected: int = 0
    right: int = 0
    flagged: int = 0
    wrong: list[str] = field(default_factory=list)
    missing_problems: list[str] = field(default_factory=list)
    detected: str = ""

    @property
    def silently_wrong(self) -> int:
        return len(self.wrong)


def _where(lines: Sequence[str], entry: Mapping[str, Any], name: str, key: str = "at"
           ) -> int | None:
    """The line an entry names: `line` (a number, or null for the file as a whole) or the
    one line holding the text `at`."""
    if key == "at" and "line" in entry:
        return int(entry["line"]) if entry["line"] is not None else None
    return _line_of(lines, str(entry[key]), name)


def _line_of(lines: Sequence[str], at: str, name: str) -> int:
    hits = [i + 1 for i, line in enumerate(lines) if at in line]
    if len(hits) != 1:
        raise ValueError(f"{name}: `at` {at!r} is on {len(hits)} lines, must be on exactly 1")
    return hits[0]


def _same(actual: Any, wanted: Any) -> bool:
    if wanted is None:
        return actual is None or (isinstance(actual, float) and math.isnan(actual))
    if isinstance(wanted, bool) or isinstance(actual, bool):
        return bool(actual) is wanted if actual is not None else False
    if isinstance(wanted, int | float):
        try:
            return actual is not None and math.isclose(float(actual), float(wanted),
                                                       rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return bool(actual == wanted)


def _metric(entry: Mapping[str, Any]) -> str | None:
    if "metric" in entry:
        return str(entry["metric"]) if entry["metric"] is not None else None
    return DEFAULT_METRIC.get(str(entry.get("kind", "perf")))


def _rows_at(records: list[dict[str, Any]], line: int | None, kind: str, metric: str | None
             ) -> list[dict[str, Any]]:
    return [r for r in records if r["source_line"] == line and r["kind"] == kind
            and (r["metric"] == metric or (metric is None and r["metric"] is None))]


def check_file(text_path: Path, spec: Mapping[str, Any], result: IngestResult) -> FileAccuracy:
    """Compare one ingested corpus file with its sidecar."""
    name = text_path.name
    lines = text_path.read_text(encoding="utf-8").split("\n")
    acc = FileAccuracy(name, str(spec.get("format", "")))
    acc.detected = result.sources[0].format if result.sources else ""
    records = result.table.to_dict("records")
    problem_lines = {p.line for p in result.problems if p.line is not None}
    file_refused = any(p.line is None for p in result.problems)
    used: set[tuple[int | None, str, str | None]] = set()
    metrics: set[tuple[str, str | None]] = set()
    for entry in spec.get("expected", {}).get("values", []):
        acc.expected += 1
        line = _where(lines, entry, name)
        flag_line = _where(lines, entry, name, "problem_at") if "problem_at" in entry else line
        kind = str(entry.get("kind", "perf"))
        metric = _metric(entry)
        metrics.add((kind, metric))
        used.add((line, kind, metric))
        found = _rows_at(records, line, kind, metric)
        wanted = {k: entry[k] for k in _FIELDS if k in entry}
        if any(all(_same(r.get(k), v) for k, v in wanted.items()) for r in found):
            acc.right += 1
        elif found:
            got = {k: found[0].get(k) for k in wanted}
            acc.wrong.append(f"{name}:{line}: expected {wanted}, got {got}")
        elif flag_line in problem_lines or (file_refused and not found):
            acc.flagged += 1
        else:
            acc.wrong.append(f"{name}:{line}: expected {wanted}: no row and no problem")
    for r in records:
        key: tuple[int | None, str, str | None] = (int(r["source_line"]), str(r["kind"]),
                                                     r["metric"])
        if (key[1], key[2]) in metrics and key not in used:
            acc.wrong.append(f"{name}:{key[0]}: unexpected {key[1]} row {r['op']} "
                             f"{r['metric']}={r['value']} (no expectation names it)")
    for entry in spec.get("expected_problems", []):
        line = _where(lines, entry, name)
        if not file_refused and (line is None or line not in problem_lines):
            acc.missing_problems.append(f"{name}:{line}: expected a problem "
                                        f"({entry.get('why', entry.get('kind', ''))})")
    return acc


def corpus_files(folder: Path) -> list[tuple[Path, dict[str, Any]]]:
    return [(txt, json.loads(txt.with_suffix(".json").read_text(encoding="utf-8")))
            for txt in sorted(folder.glob("*.txt"))]


def check_corpus(folder: Path) -> list[FileAccuracy]:
    """Ingest every corpus file on its own and compare it with its sidecar."""
    return [check_file(txt, spec, ingest_files([txt])) for txt, spec in corpus_files(folder)]


def accuracy_table(results: Sequence[FileAccuracy]) -> list[dict[str, Any]]:
    """Per format: files, values expected, extracted right, flagged, silently wrong."""
    by: dict[str, dict[str, Any]] = {}
    for acc in results:
        row = by.setdefault(acc.format, {"format": acc.format, "files": 0, "expected": 0,
                                         "right": 0, "flagged": 0, "silently_wrong": 0})
        row["files"] += 1
        row["expected"] += acc.expected
        row["right"] += acc.right
        row["flagged"] += acc.flagged
        row["silently_wrong"] += acc.silently_wrong
    rows = sorted(by.values(), key=lambda r: str(r["format"]))
    total = {"format": "total", **{k: sum(r[k] for r in rows) for k in
                                   ("files", "expected", "right", "flagged", "silently_wrong")}}
    return [*rows, total]
