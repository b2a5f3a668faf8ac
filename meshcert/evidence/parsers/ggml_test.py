"""The patched test-backend-ops fork's stderr lines (per-sample spread and metadata):

    ggml_test: perf_warmup op=OP params=P sample=i/n runs=r avg_us=x
    ggml_test: perf_sample op=OP params=P sample=i/n runs=r avg_us=x
    ggml_test: perf_summary op=OP params=P warmup_samples=w samples=n min_us=a median_us=b max_us=c
    ggml_test: perf_metadata op=OP params=P key=value ...

They usually arrive interleaved in a console log; `tbo_console` hands them to `parse_line`.
A `backend=` key on a line, if present, overrides the backend of the section it appears in.
"""

from __future__ import annotations

import re
from typing import Any

from meshcert.evidence.parsers.base import GGML_TEST, UNKNOWN_LINE, Const, ParsedFile, Row, to_float
from meshcert.evidence.parsers.params import parse_params, parse_value

PREFIX = "ggml_test:"

_SAMPLE = (r"ggml_test: perf_(sample|warmup) op=(\S+) params=(\S*) sample=(\d+)/(\d+) "
           r"runs=(\d+) avg_us=(\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)[ \t]*$")
_FAST_SAMPLE = re.compile(_SAMPLE)
SAMPLE_LINES = re.compile("\n" + _SAMPLE, re.MULTILINE)
"""perf_sample / perf_warmup lines in their usual field order, for one findall over
"\n" + "\n".join(lines)."""
_SAMPLE_PREFIXES = ("ggml_test: perf_sample ", "ggml_test: perf_warmup ")
_EVENT = re.compile(r"ggml_test:\s*(\S+)\s*(.*)$")
_TOKEN_SPLIT = re.compile(r"\s+(?=[A-Za-z_][\w.\-]*=)")
_KINDS = {"perf_sample": "perf_sample", "perf_warmup": "perf_warmup",
          "perf_summary": "perf_summary", "perf_metadata": "perf_metadata"}


def parse(text: str, source: str) -> ParsedFile:
    """A file of `ggml_test:` lines (other lines are counted as ignored)."""
    out = ParsedFile(GGML_TEST)
    samples: list[str] = []
    linenos: list[int] = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.startswith(_SAMPLE_PREFIXES):
            samples.append(line)
            linenos.append(lineno)
            continue
        at = line.find(PREFIX)
        if at < 0:
            if line.strip():
                out.ignored += 1
            continue
        parse_line(line[at:], lineno, None, None, source, out)
    found = SAMPLE_LINES.findall("\n" + "\n".join(samples))
    nones: list[str | None] = [None] * len(samples)
    if len(found) == len(samples):
        add_sample_batch(out, found, linenos, nones, nones)
    else:
        for line, lineno in zip(samples, linenos, strict=True):
            parse_line(line, lineno, None, None, source, out)
        out.sort_problems()
    return out


def add_sample_batch(out: ParsedFile, found: list[tuple[str, ...]], linenos: list[int],
                     backend: list[str | None], device: list[str | None]) -> None:
    """perf_sample / perf_warmup rows from `SAMPLE_LINES.findall` groups, in one batch."""
    if not found:
        return
    n = len(found)
    events, ops, params, index, total, runs, avg = zip(*found, strict=True)
    parsed = [parse_params(p) for p in params]
    us = list(map(float, avg))
    out.add_batch(n, {
        "source_line": linenos, "format": Const(GGML_TEST, n),
        "kind": ["perf_" + e for e in events], "backend": backend, "device": device,
        "op": list(ops), "params": [p[0] for p in parsed], "param_dict": [p[1] for p in parsed],
        "us_per_run": us, "runs": list(map(int, runs)), "sample": list(map(int, index)),
        "supported": Const(True, n), "metric": Const("us_per_run", n), "value": us,
        "extra": [{"n_samples": int(t)} for t in total],
    })


def parse_line(body: str, lineno: int, backend: str | None, device: str | None, source: str,
               out: ParsedFile) -> None:
    """Parse one `ggml_test: ...` text (starting at the prefix); append a row or a problem."""
    fast = _FAST_SAMPLE.match(body)
    if fast is not None:
        event, op, raw_params, i, n, runs, avg = fast.groups()
        avg_us = to_float(avg)
        if avg_us is not None:
            canon, pdict = parse_params(raw_params)
            out.rows.append(Row(lineno, GGML_TEST, "perf_" + event, backend, device, None, op,
                                canon, pdict, avg_us, int(runs), int(i), True, None, None,
                                None, "us_per_run", avg_us, None, {"n_samples": int(n)}))
            return
    _parse_generic(body, lineno, backend, device, source, out)


def _fields(rest: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for token in _TOKEN_SPLIT.split(rest.strip()):
        key, eq, value = token.partition("=")
        if eq:
            fields[key] = value.strip()
    return fields


def _parse_generic(body: str, lineno: int, backend: str | None, device: str | None,
                   source: str, out: ParsedFile) -> None:
    match = _EVENT.match(body)
    kind = _KINDS.get(match.group(1)) if match else None
    if match is None or kind is None:
        out.problem(source, lineno, body, "unknown ggml_test line (expected perf_sample, "
                    "perf_warmup, perf_summary or perf_metadata)", UNKNOWN_LINE)
        return
    fields = _fields(match.group(2))
    op = fields.pop("op", "")
    if not op:
        out.problem(source, lineno, body, f"ggml_test {match.group(1)} without op=")
        return
    canon, pdict = parse_params(fields.pop("params", "").strip("\"'"))
    backend = fields.pop("backend", None) or backend
    if kind == "perf_metadata":
        extra: dict[str, Any] = {k: parse_value(v) for k, v in fields.items()}
        out.rows.append(Row(lineno, GGML_TEST, kind, backend, device, None, op, canon, pdict,
                            extra=extra))
        return
    if kind == "perf_summary":
        _summary(body, lineno, backend, device, op, canon, pdict, fields, source, out)
        return
    _sample(body, lineno, backend, device, kind, op, canon, pdict, fields, source, out)


def _sample(body: str, lineno: int, backend: str | None, device: str | None, kind: str,
            op: str, canon: str, pdict: dict[str, Any], fields: dict[str, str], source: str,
            out: ParsedFile) -> None:
    avg_us = to_float(fields.pop("avg_us", ""))
    index, _, total = fields.pop("sample", "").partition("/")
    runs = fields.pop("runs", "")
    if avg_us is None or not index.isdigit() or (runs and not runs.isdigit()):
        out.problem(source, lineno, body, f"ggml_test {kind} needs sample=i/n and a numeric "
                    "avg_us= (and runs= if given)")
        return
    extra: dict[str, Any] = {k: parse_value(v) for k, v in fields.items()}
    if total.isdigit():
        extra["n_samples"] = int(total)
    out.rows.append(Row(lineno, GGML_TEST, kind, backend, device, None, op, canon, pdict,
                        avg_us, int(runs) if runs else None, int(index), True,
                        metric="us_per_run", value=avg_us, extra=extra))


def _summary(body: str, lineno: int, backend: str | None, device: str | None, op: str,
             canon: str, pdict: dict[str, Any], fields: dict[str, str], source: str,
             out: ParsedFile) -> None:
    median = to_float(fields.pop("median_us", ""))
    if median is None:
        out.problem(source, lineno, body, "ggml_test perf_summary without a numeric median_us=")
        return
    extra: dict[str, Any] = {k: parse_value(v) for k, v in fields.items()}
    for key in ("min_us", "max_us"):
        if key in extra:
            if not isinstance(extra[key], int | float):
                out.problem(source, lineno, body, f"ggml_test perf_summary {key} is not a "
                            "number")
                return
            extra[key] = float(extra[key])
    out.rows.append(Row(lineno, GGML_TEST, "perf_summary", backend, device, None, op, canon,
                        pdict, median, None, None, True, metric="median_us", value=median,
                        extra=extra))
