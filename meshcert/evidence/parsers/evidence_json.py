"""meshcert's own evidence JSON (what `meshcert evidence ingest --out` writes), both ways.

    {"schema": "meshcert.evidence", "version": 1,
     "tool": {"name": "meshcert", "version": "0.1.0"}, "created": "...Z", "label": null,
     "columns": [...], "sources": [{file, format, sha256, ...}], "problems": [{...}],
     "rows": [{"source_file": ..., "source_line": ..., ...}, ...]}

Lossless for the table: missing values (None, NaN, pd.NA) are null, infinities travel as the
strings "Infinity" / "-Infinity", `param_dict` arrays (tuples) as JSON lists that come back as
tuples (parsers never put tuples in `extra`, so `extra` lists stay lists).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

from meshcert.evidence.columns import DTYPES
from meshcert.evidence.parsers.base import REJECTED, IngestProblem, excerpt

SCHEMA = "meshcert.evidence"
VERSION = 1

FLOAT_COLUMNS = ("us_per_run", "nmse", "value", "value_err")
_NONFINITE = {"Infinity": math.inf, "-Infinity": -math.inf}


@dataclass
class EvidenceDocument:
    """A decoded evidence JSON: the table as columns, its sources and recorded problems."""

    columns: dict[str, list[Any]]
    sources: list[dict[str, Any]] = field(default_factory=list)
    problems: list[IngestProblem] = field(default_factory=list)
    read_problems: list[IngestProblem] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


def _plain(value: Any) -> Any:
    """JSON-safe: tuples -> lists, NaN -> None, infinities -> strings, numpy -> Python."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return None if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):   # numpy / pandas scalars
        return _plain(value.item())
    return value


def _tuples(value: Any) -> Any:
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    return value


def dumps(meta: dict[str, Any], columns: list[str], sources: list[dict[str, Any]],
          problems: list[IngestProblem], rows: list[dict[str, Any]]) -> str:
    """The document text (rows: one dict per table row, missing values as None)."""
    doc = {"schema": SCHEMA, "version": VERSION, **meta, "columns": columns,
           "sources": _plain(sources),
           "problems": [{"file": p.file, "line": p.line, "excerpt": p.excerpt,
                         "reason": p.reason, "kind": p.kind} for p in problems],
           "rows": [_plain(r) for r in rows]}
    return json.dumps(doc, indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def parse(text: str, source: str, columns: tuple[str, ...]) -> EvidenceDocument:
    """Decode; anything off (bad JSON, other schema, newer version) is a read problem."""
    empty = EvidenceDocument({c: [] for c in columns})
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        empty.read_problems.append(IngestProblem(source, exc.lineno, excerpt(text[:120]),
                                                 f"bad evidence JSON: {exc.msg}", REJECTED))
        return empty
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        empty.read_problems.append(IngestProblem(source, 1, excerpt(text[:120]),
                                                 f"not a {SCHEMA} document", REJECTED))
        return empty
    version = doc.get("version")
    if not isinstance(version, int) or version > VERSION:
        empty.read_problems.append(IngestProblem(
            source, 1, f"version={version!r}", f"evidence JSON version {version!r} is newer "
            f"than this meshcert reads ({VERSION})", REJECTED))
        return empty
    out = EvidenceDocument({c: [] for c in columns},
                           meta={k: doc.get(k) for k in ("tool", "created", "label")})
    for i, entry in enumerate(_list(doc.get("sources"))):
        wrong = _wrong_source_fields(entry)
        if wrong is None:
            out.sources.append(entry)
        else:
            out.read_problems.append(IngestProblem(source, None, f"sources[{i}]",
                                                   f"source entry skipped: {wrong}"))
    for p in _list(doc.get("problems")):
        if isinstance(p, dict):
            line = p.get("line")
            out.problems.append(IngestProblem(str(p.get("file", "")),
                                              line if _is_int(line) else None,
                                              str(p.get("excerpt", "")),
                                              str(p.get("reason", "")),
                                              str(p.get("kind", "malformed"))))
    unknown: set[str] = set()
    for i, row in enumerate(_list(doc.get("rows"))):
        if not isinstance(row, dict):
            out.read_problems.append(IngestProblem(source, None, f"rows[{i}]",
                                                   "row is not an object"))
            continue
        decoded = {name: _decode(name, row.get(name)) for name in out.columns}
        misfits = [n for n, v in decoded.items() if not _fits(DTYPES.get(n, "object"), n, v)]
        if misfits:
            out.read_problems.append(IngestProblem(source, None, f"rows[{i}]", "row skipped: "
                                                   f"wrong type for {', '.join(misfits)}"))
            continue
        unknown.update(k for k in row if k not in out.columns)
        for name, values in out.columns.items():
            values.append(decoded[name])
    if unknown:
        out.read_problems.append(IngestProblem(
            source, None, ", ".join(sorted(unknown)), "unknown columns dropped (written by a "
            "newer meshcert?)", "unknown"))
    return out


_SOURCE_FIELDS: dict[str, tuple[type, ...]] = {
    "file": (str,), "format": (str,), "sha256": (str,), "lines": (int,), "rows": (int,),
    "build_commit": (str, type(None)), "backends": (list,), "variant": (str,),
    "run_id": (str,), "ignored": (int,), "problems": (int,), "notes": (dict,),
}
_SOURCE_REQUIRED = ("file", "format", "sha256", "lines", "rows")  # SourceInfo has no default


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and -2**63 <= value < 2**63


def _wrong_source_fields(entry: Any) -> str | None:
    """Why a `sources[]` entry cannot become a SourceInfo (None: it can)."""
    if not isinstance(entry, dict):
        return "not an object"
    missing = [k for k in _SOURCE_REQUIRED if k not in entry]
    if missing:
        return f"missing {', '.join(missing)}"
    wrong = [k for k, kinds in _SOURCE_FIELDS.items() if k in entry and (
        not isinstance(entry[k], kinds) or (int in kinds and isinstance(entry[k], bool)))]
    return f"wrong type for {', '.join(wrong)}" if wrong else None


def _fits(dtype: str, name: str, value: Any) -> bool:
    """Whether a decoded value can go into a table column of `dtype`."""
    if name in ("param_dict", "extra"):
        return True  # _decode made them dicts
    if dtype == "int64":
        return _is_int(value)
    if value is None:
        return True
    if dtype == "Int64":
        return _is_int(value)
    if dtype == "boolean":
        return isinstance(value, bool)
    if dtype == "float64":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return False
        try:
            float(value)
        except OverflowError:
            return False
        return True
    return isinstance(value, str)


def _decode(name: str, value: Any) -> Any:
    if name in FLOAT_COLUMNS and isinstance(value, str):
        return _NONFINITE.get(value, math.nan)
    if name == "param_dict":
        return {k: _tuples(v) for k, v in value.items()} if isinstance(value, dict) else {}
    if name == "extra":
        return value if isinstance(value, dict) else {}
    return value

