"""The nightly performance history JSONL (spec section 8): one row per line, schema_version 1.

`read_points` streams a history file line by line (bounded memory: a 1 GB file is never read
whole) and yields each usable line as a `HistoryPoint` or a problem naming its line; the
regression classes are `meshcert.evidence.history`'s. `parse` is the ingest parser: a row per
numeric top-level field (kind `history`, the cohort as the setup key in `params`, cohort_key,
source_sha, created_utc and complete in `extra`). A one-row shard may be plain (pretty) JSON.
Refused lines: schema_version other than 1 (schema 3 is agentic replay history), a cohort_key that
is not the SHA-256 of its cohort JSON (sorted keys, no spaces: it would pool setups that differ),
NaN / Infinity, units the field contradicts.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import IO, Any, NamedTuple

from meshcert.evidence.parsers.base import (
    PERF_HISTORY,
    REJECTED,
    IngestProblem,
    ParsedFile,
    excerpt,
)
from meshcert.evidence.parsers.mesh_json import (
    MetricRows,
    NonFinite,
    loads_strict,
    number,
    unit_contradiction,
)

_STRICT_DECODE = loads_strict

HISTORY = "history"      # kind of a history row
THROUGHPUT = "output_tokens_per_second"
TTFT = "ttft_ms_mean"
MAX_SHARD_BYTES = 1 << 20    # a pretty-printed one-row shard is small: never read more
_TEXT_FIELDS = ("created_utc", "source_sha", "cohort_key", "schema_version", "complete")


class HistoryPoint(NamedTuple):
    """One usable history row (a tuple: cheap to build a million times)."""

    line: int
    cohort_key: str
    source_sha: str
    created_utc: str
    complete: bool
    throughput: float | None
    ttft_ms: float | None


def cohort_key_of(cohort: Any) -> str:
    return hashlib.sha256(json.dumps(cohort, sort_keys=True, separators=(",", ":"),
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


_VERIFIED: dict[str, Any] = {}     # cohort_key -> a cohort already checked against it
_VERIFIED_MAX = 4096


def _key_matches(key: str, cohort: dict[str, Any]) -> bool:
    """cohort_key == SHA-256 of the cohort JSON; a cohort equal to one already verified
    under this key is not hashed again (rows of one setup repeat it)."""
    if _VERIFIED.get(key) == cohort:
        return True
    if cohort_key_of(cohort) != key:
        return False
    if len(_VERIFIED) >= _VERIFIED_MAX:
        _VERIFIED.clear()
    _VERIFIED[key] = cohort
    return True


def check_record(doc: Any) -> str | None:
    """Why a decoded history row is refused (None: usable)."""
    if not isinstance(doc, dict):
        return "history row is not an object"
    version = doc.get("schema_version")
    if version != 1:
        return (f"not evidence: schema_version={version!r} (this reader takes the competitive "
                "schema 1; schema 3 is agentic replay history)")
    key = doc.get("cohort_key")
    if not isinstance(key, str) or not isinstance(doc.get("cohort"), dict):
        return "history row without cohort / cohort_key"
    if not _key_matches(key.lower(), doc["cohort"]):
        return (f"not evidence: cohort_key {key[:12]}... is not the SHA-256 of its cohort JSON "
                "(rows of different setups would be pooled)")
    if not isinstance(doc.get("source_sha"), str):
        return "history row without source_sha"
    for field in (THROUGHPUT, TTFT):
        value = doc.get(field)
        if type(value) is float and 0 <= value < _BIG:
            continue                    # the common case: a finite, non-negative float
        number_value = number(value)
        if number_value is not None:
            wrong = unit_contradiction(field, number_value)
            if wrong:
                return wrong
    return None


_BIG = float("inf")


def _decode(raw: bytes | str, line: int, source: str
            ) -> tuple[Any | None, IngestProblem | None]:
    text = raw.decode("utf-8", errors="replace") if isinstance(raw, bytes) else raw
    try:
        return _STRICT_DECODE(text), None
    except NonFinite as exc:
        return None, IngestProblem(source, line, excerpt(text), f"non-finite number {exc}",
                                   REJECTED)
    except json.JSONDecodeError as exc:
        return None, IngestProblem(source, line, excerpt(text), f"bad JSON line: {exc.msg}")


def point_of(doc: dict[str, Any], line: int) -> HistoryPoint:
    tput, ttft = doc.get(THROUGHPUT), doc.get(TTFT)
    return HistoryPoint(line, doc["cohort_key"].lower(), doc["source_sha"],
                        str(doc.get("created_utc") or ""), doc.get("complete") is True,
                        tput if type(tput) is float else number(tput),
                        ttft if type(ttft) is float else number(ttft))


def read_points(handle: IO[bytes], source: str
                ) -> Iterator[tuple[HistoryPoint, dict[str, Any]] | IngestProblem]:
    """Each line of a JSONL history (or a one-row pretty JSON shard) as (point, its cohort)
    or a problem; streamed."""
    first = handle.readline()
    if first.strip() == b"{":               # a one-row shard printed as (indented) JSON
        body = first + handle.read(MAX_SHARD_BYTES)
        yield from _records([(1, body)], source)
        return
    yield from _records(_numbered(first, handle), source)


def _numbered(first: bytes, handle: IO[bytes]) -> Iterator[tuple[int, bytes]]:
    yield 1, first
    yield from enumerate(handle, 2)


def _records(lines: Any, source: str
             ) -> Iterator[tuple[HistoryPoint, dict[str, Any]] | IngestProblem]:
    for line, raw in lines:
        if not raw.strip():
            continue
        doc, problem = _decode(raw, line, source)
        if problem is not None:
            yield problem
            continue
        why = check_record(doc)
        if why is not None:
            yield IngestProblem(source, line, excerpt(raw.decode("utf-8", "replace")
                                                      if isinstance(raw, bytes) else raw), why,
                                REJECTED if why.startswith("not evidence") else "malformed")
            continue
        assert isinstance(doc, dict)        # check_record refuses anything else
        yield point_of(doc, line), doc


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(PERF_HISTORY)
    stripped = text.strip()
    if stripped.startswith("{") and "\n" in stripped and not stripped.split("\n", 1)[0] \
            .rstrip().endswith("}"):
        items = _records([(1, text)], source)
    else:
        items = _records(enumerate(text.split("\n"), 1), source)
    for item in items:
        if isinstance(item, IngestProblem):
            out.problems.append(item)
            continue
        point, doc = item
        cohort = doc["cohort"]
        setup = {"cohort_key": point.cohort_key, **{k: v for k, v in cohort.items()}}
        extra = {"cohort_key": point.cohort_key, "source_sha": point.source_sha,
                 "created_utc": point.created_utc, "complete": point.complete}
        rows = MetricRows(out, source, PERF_HISTORY, "performance history", setup,
                          line=point.line, kind=HISTORY)
        for key, value in doc.items():
            if key not in _TEXT_FIELDS:
                rows.add(key, value, f"line {point.line}: /{key}", extra=extra)
    return out
