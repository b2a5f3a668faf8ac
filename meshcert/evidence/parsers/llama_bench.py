"""llama-bench `-o json | jsonl | csv | sql` (old builds' sql: table `test`), and the default
markdown table (`llama_bench_md`).

Every result record (build_commit, backends, model_type, n_prompt, n_gen, n_depth, ..., avg_ns,
stddev_ns, avg_ts, stddev_ts; JSON also samples_ns / samples_ts) becomes `bench` rows:
metric `avg_ts` (value_err = stddev_ts), metric `avg_ns` (value_err = stddev_ns, us_per_run =
avg_ns / 1000) and, when the samples are there, one `sample_ns` and one `sample_ts` row per
repetition (`sample` = 1..n). `op` is the test name (`pp512`, `tg128`, `pp512+tg128`, with
`@d<depth>` when n_depth > 0); `params` is the run configuration (model file name, batch sizes,
threads, cache types, ...); hardware and build facts go to `device`, `backend`, `build_commit`
and `extra`.
"""

from __future__ import annotations

import csv
import json
import os
from typing import Any

from meshcert.evidence.parsers import llama_bench_md
from meshcert.evidence.parsers.base import LLAMA_BENCH, REJECTED, ParsedFile, Row, line_of, to_float
from meshcert.evidence.parsers.params import format_params, parse_value
from meshcert.evidence.parsers.sql_insert import iter_sql

TABLE = "llama_bench"
OLD_TABLE = "test"      # `-o sql` of builds before the table was renamed
_MEASURES = ("avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns", "samples_ts")
_FACTS = ("build_commit", "build_number", "cpu_info", "gpu_info", "backends", "test_time",
          "model_size", "model_n_params")
_METRIC_PREFIXES = ("avg_", "stddev_", "samples_", "median_", "min_", "max_")


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(LLAMA_BENCH)
    head = text.lstrip()[:1]
    if head in "[{" and llama_bench_md.has_table(text[:1 << 20]) and '"avg_' not in text[:65536]:
        head = "|"                  # `[root@host ...]# llama-bench ...` above a table
    if head == "|":
        llama_bench_md.parse(text, source, out)
    elif head == "[":
        _parse_json_array(text, source, out)
    elif head == "{":
        _parse_jsonl(text, source, out)
    elif "INSERT INTO" in text.upper()[:100000] or text.lstrip()[:6].upper() == "CREATE":
        _parse_sql(text, source, out)
    elif llama_bench_md.has_table(text[:1 << 20]):
        llama_bench_md.parse(text, source, out)
    else:
        _parse_csv(text, source, out)
    return out


def _parse_json_array(text: str, source: str, out: ParsedFile) -> None:
    decoder = json.JSONDecoder()
    pos = len(text) - len(text.lstrip()) + 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            out.problem(source, line_of(text, pos - 1), text[-80:], "JSON array is not closed "
                        "(truncated output?)")
            return
        if text[pos] == "]":
            rest = text[pos + 1:].strip()
            if rest:
                out.problem(source, line_of(text, pos + 1), rest, "text after the JSON array")
            return
        try:
            record, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            out.problem(source, exc.lineno, text[pos:pos + 120], f"bad JSON: {exc.msg}")
            return
        _record(record, line_of(text, pos), text[pos:end], "json", source, out)
        pos = end


def _parse_jsonl(text: str, source: str, out: ParsedFile) -> None:
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            out.problem(source, lineno, line, f"bad JSON line: {exc.msg}")
            continue
        _record(record, lineno, line, "jsonl", source, out)


def _parse_csv(text: str, source: str, out: ParsedFile) -> None:
    reader = csv.reader(text.split("\n"))
    header: list[str] | None = None
    for fields in reader:
        lineno = reader.line_num
        if not fields or not any(f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip() for f in fields]
            if "avg_ns" not in header and "avg_ts" not in header:
                out.problem(source, lineno, ",".join(fields), "CSV header has neither avg_ns "
                            "nor avg_ts: not llama-bench -o csv output", REJECTED)
                return
            continue
        if len(fields) != len(header):
            out.problem(source, lineno, ",".join(fields),
                        f"{len(header)} columns in the header but {len(fields)} here")
            continue
        _record(dict(zip(header, fields, strict=True)), lineno, ",".join(fields), "csv",
                source, out)


def _parse_sql(text: str, source: str, out: ParsedFile) -> None:
    for item in iter_sql(text):
        if item.kind in ("blank", "create"):
            continue
        if item.kind == "other":
            out.ignored += 1
        elif item.kind == "bad-insert" or item.values is None:
            out.problem(source, item.lineno, item.line, item.reason or "bad INSERT")
        elif item.table not in (TABLE, OLD_TABLE):
            out.problem(source, item.lineno, item.line,
                        f"INSERT into {item.table}, expected {TABLE}")
        else:
            _record(item.values, item.lineno, item.line, "sql", source, out)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        return to_float(value.strip()) if value.strip() else None
    return None


def _int(value: Any) -> int:
    number = _number(value)
    return int(number) if number is not None else 0


def _plain(value: Any) -> Any:
    """JSON values keep their type; CSV/SQL strings become int/float/str."""
    return parse_value(value) if isinstance(value, str) else value


def test_name(n_prompt: int, n_gen: int, n_depth: int) -> str:
    if n_prompt and n_gen:
        name = f"pp{n_prompt}+tg{n_gen}"
    elif n_prompt:
        name = f"pp{n_prompt}"
    elif n_gen:
        name = f"tg{n_gen}"
    else:
        name = "bench"
    return f"{name}@d{n_depth}" if n_depth else name


def _record(record: Any, lineno: int, text: str, output: str, source: str,
            out: ParsedFile) -> None:
    if not isinstance(record, dict):
        out.problem(source, lineno, text, "llama-bench record is not an object")
        return
    avg_ns, avg_ts = _number(record.get("avg_ns")), _number(record.get("avg_ts"))
    if avg_ns is None and avg_ts is None:
        out.problem(source, lineno, text, "llama-bench record without avg_ns or avg_ts")
        return
    params: dict[str, Any] = {}
    extra: dict[str, Any] = {"output": output}
    for key, value in record.items():
        if key in _MEASURES:
            continue
        if key in _FACTS or key.startswith(_METRIC_PREFIXES):
            extra[key] = _plain(value)
        elif key == "model_filename":
            params["model"] = os.path.basename(str(value))
        else:
            plain = _plain(value)
            params[key] = int(plain) if isinstance(plain, bool) else plain
    canon, pdict = format_params(params), params
    op = test_name(_int(record.get("n_prompt")), _int(record.get("n_gen")),
                   _int(record.get("n_depth")))
    backend = str(record.get("backends") or "") or None
    device = str(record.get("gpu_info") or record.get("cpu_info") or "") or None
    commit = str(record.get("build_commit") or "") or None
    if commit and out.build_commit is None:
        out.build_commit = commit
    samples_ns = _samples(record.get("samples_ns"))
    samples_ts = _samples(record.get("samples_ts"))
    runs = len(samples_ns or samples_ts or []) or None
    rows = out.rows
    if avg_ts is not None:
        rows.append(Row(lineno, LLAMA_BENCH, "bench", backend, device, commit, op, canon, pdict,
                        runs=runs, metric="avg_ts", value=avg_ts,
                        value_err=_number(record.get("stddev_ts")), extra=dict(extra)))
    if avg_ns is not None:
        rows.append(Row(lineno, LLAMA_BENCH, "bench", backend, device, commit, op, canon, pdict,
                        avg_ns / 1000.0, runs, metric="avg_ns", value=avg_ns,
                        value_err=_number(record.get("stddev_ns")), extra=dict(extra)))
    for i, ns in enumerate(samples_ns or [], 1):
        rows.append(Row(lineno, LLAMA_BENCH, "bench", backend, device, commit, op, canon, pdict,
                        ns / 1000.0, sample=i, metric="sample_ns", value=ns,
                        extra={"output": output}))
    for i, ts in enumerate(samples_ts or [], 1):
        rows.append(Row(lineno, LLAMA_BENCH, "bench", backend, device, commit, op, canon, pdict,
                        sample=i, metric="sample_ts", value=ts, extra={"output": output}))
    if record.get("samples_ns") is not None and samples_ns is None:
        out.problem(source, lineno, text, "samples_ns is not a list of numbers")


def _samples(value: Any) -> list[float] | None:
    if not isinstance(value, list):
        return None
    numbers = [_number(v) for v in value]
    if any(n is None for n in numbers):
        return None
    return [n for n in numbers if n is not None]
