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

from evidence.parsers.base import REJECTED, IngestProblem, excerpt

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
    out.sources = [s for s in doc.get("sources") or [] if isinstance(s, dict)]
    for p in doc.get("problems") or []:
        if isinstance(p, dict):
            out.problems.append(IngestProblem(str(p.get("file", "")), p.get("line"),
                                              str(p.get("excerpt", "")),
                                              str(p.get("reason", "")),
                                              str(p.get("kind", "malformed"))))
    unknown: set[str] = set()
    for i, row in enumerate(doc.get("rows") or []):
        if not isinstance(row, dict):
            out.read_problems.append(IngestProblem(source, None, f"rows[{i}]",
                                                   "row is not an object"))
            continue
        unknown.update(k for k in row if k not in out.columns)
        for name, values in out.columns.items():
            values.append(_decode(name, row.get(name)))
    if unknown:
        out.read_problems.append(IngestProblem(
            source, None, ", ".join(sorted(unknown)), "unknown columns dropped (written by a "
            "newer meshcert?)", "unknown"))
    return out


def _decode(name: str, value: Any) -> Any:
    if name in FLOAT_COLUMNS and isinstance(value, str):
        return _NONFINITE.get(value, math.nan)
    if name == "param_dict":
        return {k: _tuples(v) for k, v in value.items()} if isinstance(value, dict) else {}
    if name == "extra":
        return value if isinstance(value, dict) else {}
    return value

