"""test-backend-ops `--output sql` (and the rejection of `--output csv`).

    INSERT INTO test_backend_ops (test_time, build_commit, backend_name, op_name, op_params,
      test_mode, supported, passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb,
      n_runs[, device_description, backend_reg_name]) VALUES ('...', ...);

perf rows give `time_us` per run and `n_runs`; test rows give `passed` and `error_message`
(no NMSE). Test-mode rows that were not supported are skipped (note `test_not_supported`),
as in the console log.
"""

from __future__ import annotations

from typing import Any

from meshcert.evidence.parsers.base import REJECTED, TBO_CSV, TBO_SQL, ParsedFile, Row
from meshcert.evidence.parsers.params import parse_params
from meshcert.evidence.parsers.sql_insert import iter_sql

TABLE = "test_backend_ops"
_REQUIRED = ("backend_name", "op_name", "op_params", "test_mode", "supported")
_TRUE = {"1", "true", "True", "TRUE"}
_FALSE = {"0", "false", "False", "FALSE", ""}


def _bool(text: str | None) -> bool | None:
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    return None


def _num(text: str | None) -> float | None:
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(TBO_SQL)
    for item in iter_sql(text):
        if item.kind in ("blank", "create"):
            continue
        if item.kind == "other":
            out.ignored += 1
            continue
        if item.kind == "bad-insert" or item.values is None:
            out.problem(source, item.lineno, item.line, item.reason or "bad INSERT")
            continue
        if item.table != TABLE:
            out.problem(source, item.lineno, item.line,
                        f"INSERT into {item.table}, expected {TABLE}")
            continue
        _row(item.values, item.lineno, item.line, source, out)
    return out


def _row(v: dict[str, str | None], lineno: int, line: str, source: str,
         out: ParsedFile) -> None:
    missing = [c for c in _REQUIRED if c not in v]
    if missing:
        out.problem(source, lineno, line, f"missing column(s): {', '.join(missing)}")
        return
    mode = v["test_mode"] or ""
    supported = _bool(v["supported"])
    if supported is None:
        out.problem(source, lineno, line, f"supported={v['supported']!r} is not 0/1")
        return
    commit = v.get("build_commit") or None
    if commit and out.build_commit is None:
        out.build_commit = commit
    canon, pdict = parse_params(v["op_params"] or "")
    backend = v["backend_name"] or None
    device = v.get("device_description") or None
    extra: dict[str, Any] = {k: v[k] for k in ("test_time", "backend_reg_name") if v.get(k)}
    op = v["op_name"] or ""
    if mode == "perf":
        if not supported:
            out.rows.append(Row(lineno, TBO_SQL, "perf", backend, device, commit, op, canon,
                                pdict, supported=False, extra=extra))
            return
        us = _num(v.get("time_us"))
        runs = v.get("n_runs") or ""
        if us is None or not runs.isdigit():
            out.problem(source, lineno, line, "perf row without a numeric time_us and n_runs")
            return
        for key in ("flops", "bandwidth_gb_s", "memory_kb"):
            number = _num(v.get(key))
            if number:
                extra[key] = number
        out.rows.append(Row(lineno, TBO_SQL, "perf", backend, device, commit, op, canon, pdict,
                            us, int(runs), None, True, metric="us_per_run", value=us,
                            extra=extra))
    elif mode == "test":
        if not supported:
            out.note("test_not_supported")
            return
        passed = _bool(v.get("passed"))
        if passed is None:
            out.problem(source, lineno, line, f"passed={v.get('passed')!r} is not 0/1")
            return
        out.rows.append(Row(lineno, TBO_SQL, "parity", backend, device, commit, op, canon,
                            pdict, supported=True, passed=passed,
                            error=v.get("error_message") or None, extra=extra))
    else:
        out.note(f"{mode or 'unknown'}_mode_rows")


def reject_csv(text: str, source: str) -> ParsedFile:
    """test-backend-ops `--output csv` has no timing (and no `passed`) column."""
    out = ParsedFile(TBO_CSV)
    out.problem(source, 1, text.split("\n", 1)[0],
                "test-backend-ops --output csv has no timing column (time_us) and cannot "
                "serve as perf or parity evidence; re-run with --output sql or use the console "
                "log", REJECTED)
    return out
