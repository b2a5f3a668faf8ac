"""Files -> parsers -> one tidy table, with provenance and every problem, never an exception
for bad input.

    result = ingest_files(["kernel-sweep/q3-k-mul-mv-id-nsg-4.console.log", "run-1.sql"])
    result.table        # pandas DataFrame, columns meshcert.evidence.columns.COLUMNS (built on
    first use)
    result.row_count, result.rows_by_kind() ...   # counts without pandas
    result.problems     # IngestProblem(file, line, excerpt, reason, kind)
    result.sources      # SourceInfo(file, format, sha256, lines, rows, build_commit, ...)
    write_evidence_json(result, "evidence.json")   # read back: read_evidence_json / ingest

A file whose bytes were already ingested (directly or inside a merged evidence JSON) is skipped
with a `duplicate` problem: the same run twice would count its samples twice. (Not so for
`evidence run`'s own logs: each is a run it recorded, and two repeats may print the same.)

Ingesting needs neither pandas nor numpy: the rows stay as the parsers gave them
(`meshcert.evidence.rows`) until something reads `result.table`.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Any, Protocol

from meshcert.core.atomic import write_atomic
from meshcert.evidence.columns import COLUMNS, DEFAULT_VARIANT
from meshcert.evidence.gc_pause import gc_paused
from meshcert.evidence.parsers import PARSERS, detect, unrecognised_message
from meshcert.evidence.parsers import evidence_json as ej
from meshcert.evidence.parsers.base import (
    DUPLICATE,
    EVIDENCE_JSON,
    UNKNOWN,
    UNKNOWN_LINE,
    UNREADABLE,
    IngestProblem,
    ParsedFile,
    caret_to_escape,
    excerpt,
)
from meshcert.evidence.parsers.mesh_json import forget_decoded
from meshcert.evidence.rows import EvidenceRows, ParsedParts, Part, Piece, StoredColumns

if TYPE_CHECKING:
    import pandas as pd

SWEEP_DIRS = ("kernel-sweep", "fixed-block-dispatch")
_SUFFIXES = (".console.log", ".log", ".txt", ".sql", ".jsonl", ".json", ".csv")


@dataclass
class SourceInfo:
    """Provenance of one ingested file."""

    file: str
    format: str
    sha256: str
    lines: int
    rows: int
    build_commit: str | None = None
    backends: list[str] = field(default_factory=list)
    variant: str = DEFAULT_VARIANT
    run_id: str = ""
    ignored: int = 0
    problems: int = 0
    notes: dict[str, int] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SourceInfo:
        known = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**known)


@dataclass
class IngestResult:
    rows: EvidenceRows
    problems: list[IngestProblem] = field(default_factory=list)
    sources: list[SourceInfo] = field(default_factory=list)

    @property
    def table(self) -> pd.DataFrame:
        """The rows as a pandas DataFrame (columns `COLUMNS`), built on first use."""
        return self.rows.table()

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def rows_by_format(self) -> dict[str, int]:
        """Rows per format, most first."""
        return self.rows.counts.by_format

    def rows_by_kind(self) -> dict[str, int]:
        """Rows per kind, most first."""
        return self.rows.counts.by_kind

    def rows_by_kind_per_source(self) -> list[dict[str, int]]:
        """Rows per kind for each source, in source order (run_id identifies its rows)."""
        by_run = self.rows.counts.kinds_by_run
        return [by_run.get(s.run_id, {}) for s in self.sources]


def variant_for(path: str, label: str | None = None) -> str:
    """--label wins; else `kernel-sweep/<v>.console.log` / `fixed-block-dispatch/<v>...` give
    <v>; any other file is a repeated run of the default variant."""
    if label:
        return label
    slashed = path.replace("\\", "/")
    if "//" in slashed or "./" in slashed:      # PurePath's normalisation (rare; slower)
        slashed = PurePath(slashed).as_posix()
    parts = slashed.rstrip("/").rsplit("/", 2)
    if len(parts) >= 2 and parts[-2] in SWEEP_DIRS:
        name = parts[-1]
        for suffix in _SUFFIXES:
            if name.endswith(suffix) and len(name) > len(suffix):
                return name[: -len(suffix)]
        return name
    return DEFAULT_VARIANT


def run_id_for(path: str, sha256: str) -> str:
    return f"{path.replace(chr(92), '/').rstrip('/').rsplit('/', 1)[-1]}@{sha256[:12]}"


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _sha256_and_lines(data: bytes) -> tuple[str, int]:
    """sha256 and line count of the bytes (hashlib releases the GIL, so this runs beside
    decoding and parsing). The count equals `_count_lines` of the decoded text: a "\\n" byte
    is never part of a multi-byte UTF-8 sequence, decoded or replaced."""
    sha = _sha256(data)
    if not data:
        return sha, 0
    return sha, _newlines(data) + (0 if data.endswith(b"\n") else 1)


_NUMPY_COUNT_FROM = 1 << 20     # bytes: below this the count's GIL time is negligible


def _newlines(data: bytes) -> int:
    """Newline bytes in `data`. `bytes.count` holds the GIL (about 0.3 ms per MB that the
    parser waits); numpy's count releases it, but importing numpy costs more than counting a
    100 MB log, so numpy counts big files only when something loaded it already (the
    DataFrame does)."""
    np = sys.modules.get("numpy")
    if np is None or len(data) < _NUMPY_COUNT_FROM:
        return data.count(b"\n")
    return int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) == 10))


def _count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


_THREADED_HASH_FROM = 1 << 20   # bytes


class _Digest(Protocol):
    def result(self) -> tuple[str, int]: ...


@dataclass(frozen=True)
class _Done:
    """An already computed (sha256, lines), shaped like the thread's future."""

    value: tuple[str, int]

    def result(self) -> tuple[str, int]:
        return self.value


class _Ingester:
    """Collects parts from many inputs, in order, for one table."""

    def __init__(self, label: str | None, *, distinct_runs: bool = False) -> None:
        self.label = label
        self.distinct_runs = distinct_runs
        self.parts: list[Part] = []
        self.pieces: list[Piece] = []
        self.problems: list[IngestProblem] = []
        self.sources: list[SourceInfo] = []
        self.seen: dict[str, str] = {}      # sha256 -> file

    def add_bytes(self, name: str, data: bytes) -> None:
        if len(data) < _THREADED_HASH_FROM:     # a thread costs more than hashing a small file
            self._add_bytes(name, data, _Done(_sha256_and_lines(data)))
            return
        # hashlib releases the GIL: hash in a thread while this one decodes and parses
        with ThreadPoolExecutor(max_workers=1) as pool:
            self._add_bytes(name, data, pool.submit(_sha256_and_lines, data))

    def _add_bytes(self, name: str, data: bytes, digest: _Digest) -> None:
        if b"\x00" in data[:8192]:
            if not self._duplicate(name, digest.result()[0]):
                self.problems.append(IngestProblem(name, None, "", "binary file, not a log",
                                                   UNREADABLE))
            return
        early: list[IngestProblem] = []
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text = data.decode("utf-8", errors="replace")
            line = data.count(b"\n", 0, exc.start) + 1
            early.append(IngestProblem(name, line, excerpt(text.split("\n")[line - 1]),
                                       "not valid UTF-8; bad bytes replaced", "encoding"))
        prepared = self._prepare(name, text)
        sha, lines = digest.result()
        if not self._duplicate(name, sha):
            self.problems.extend(early)
            self._commit(name, lines, sha, prepared)

    def add_text(self, name: str, text: str) -> None:
        sha = _sha256(text.encode("utf-8"))
        if not self._duplicate(name, sha):
            self._commit(name, _count_lines(text), sha, self._prepare(name, text))

    def _duplicate(self, name: str, sha: str) -> bool:
        if self.distinct_runs:
            return False
        first = self.seen.get(sha)
        if first is None:
            self.seen[sha] = name
            return False
        self.problems.append(IngestProblem(name, None, "", f"same content as {first} "
                                           "(already ingested); skipped", DUPLICATE))
        return True

    def _prepare(self, name: str, text: str) -> ParsedFile | ej.EvidenceDocument:
        """Detect and parse (no state changes: the file may still turn out a duplicate)."""
        if text[:1] not in ("{", "["):  # a log, not JSON (where `^[[` is plain text)
            text = caret_to_escape(text)
        fmt = detect(text, name)
        if fmt == EVIDENCE_JSON:
            return ej.parse(text, name, COLUMNS)
        parser = PARSERS.get(fmt)
        try:
            parsed = parser(text, name) if parser else ParsedFile(UNKNOWN)
        finally:
            forget_decoded()    # detection's decode is the parser's: never kept past it
        if parser is None:
            parsed.problem(name, None, text[:120], unrecognised_message(), UNKNOWN_LINE)
        elif not parsed.row_count and not parsed.problems:
            parsed.problem(name, None, "", f"no evidence rows found in this {parsed.format} "
                           "file", UNKNOWN_LINE)
        return parsed

    def _commit(self, name: str, lines: int, sha: str,
                parsed: ParsedFile | ej.EvidenceDocument) -> None:
        if isinstance(parsed, ej.EvidenceDocument):
            self._merge(parsed)
            return
        variant = variant_for(name, self.label)
        run_id = run_id_for(name, sha)
        backends = sorted(b for b in parsed.column_values("backend") if b)
        self.parts.append((parsed, name, variant, run_id))
        self.problems.extend(parsed.problems)
        self.sources.append(SourceInfo(
            file=name, format=parsed.format, sha256=sha, lines=lines,
            rows=parsed.row_count, build_commit=parsed.build_commit,
            backends=backends,
            variant=variant, run_id=run_id, ignored=parsed.ignored,
            problems=len(parsed.problems), notes=dict(parsed.notes)))

    def _merge(self, doc: ej.EvidenceDocument) -> None:
        """An evidence JSON: its rows, sources and problems join ours (duplicates dropped)."""
        self.problems.extend(doc.read_problems)
        dropped_runs: set[str] = set()
        dropped_files: set[str] = set()
        for raw in doc.sources:
            info = SourceInfo.from_dict(raw)
            if self._duplicate(info.file, info.sha256):
                dropped_runs.add(info.run_id)
                dropped_files.add(info.file)
                continue
            self.sources.append(info)
        self.problems.extend(p for p in doc.problems if p.file not in dropped_files)
        self._flush_parts()
        self.pieces.append(StoredColumns(doc.columns, frozenset(dropped_runs)))

    def _flush_parts(self) -> None:
        """Raw-file rows so far become one piece, keeping the input order across merges."""
        if self.parts:
            self.pieces.append(ParsedParts(self.parts))
            self.parts = []

    def result(self) -> IngestResult:
        self._flush_parts()
        return IngestResult(EvidenceRows(self.pieces), self.problems, self.sources)


def ingest_files(paths: Iterable[str | os.PathLike[str]], label: str | None = None, *,
                 distinct_runs: bool = False) -> IngestResult:
    """Ingest files (any mix of formats). Unreadable files become problems, not exceptions.

    `distinct_runs`: every file is its own run, recorded as such (`evidence run`'s logs), so two
    with the same bytes are two samples that happened to print the same numbers, not one file
    given twice; no file is skipped as a duplicate."""
    ingester = _Ingester(label, distinct_runs=distinct_runs)
    with gc_paused():
        for path in paths:
            name = os.fspath(path)
            try:
                with open(name, "rb") as handle:
                    data = handle.read()
            except OSError as exc:
                ingester.problems.append(IngestProblem(name, None, "", f"cannot read: "
                                                       f"{exc.strerror or exc}", UNREADABLE))
                continue
            ingester.add_bytes(name, data)
        return ingester.result()


def ingest_texts(texts: Mapping[str, str] | Sequence[tuple[str, str]],
                 label: str | None = None) -> IngestResult:
    """Ingest in-memory texts keyed by a source name (used like a path: sweep directories
    give variants). For tests and for callers that already hold the logs."""
    ingester = _Ingester(label)
    items = texts.items() if isinstance(texts, Mapping) else texts
    with gc_paused():
        for name, text in items:
            ingester.add_text(name, text)
        return ingester.result()


def tool_version() -> str:
    from meshcert.core.version import __version__

    return __version__


def evidence_json_text(result: IngestResult, label: str | None = None) -> str:
    from meshcert.evidence.table import table_records  # the rows go through the DataFrame (pandas)

    meta = {"tool": {"name": "meshcert", "version": tool_version()},
            "created": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "label": label}
    return ej.dumps(meta, list(COLUMNS), [asdict(s) for s in result.sources], result.problems,
                    table_records(result.table))


def write_evidence_json(result: IngestResult, path: str | os.PathLike[str],
                        label: str | None = None) -> Path:
    """Write the evidence JSON (schema/version, tool version, sources with sha256, problems,
    rows) atomically; returns the path."""
    return write_atomic(path, evidence_json_text(result, label))


def read_evidence_json(path: str | os.PathLike[str]) -> IngestResult:
    """Exactly what `write_evidence_json` wrote (problems reading it are appended)."""
    name = os.fspath(path)
    try:
        text = Path(name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return IngestResult(EvidenceRows(), [IngestProblem(name, None, "", f"cannot read: {exc}",
                                                           UNREADABLE)])
    doc = ej.parse(text, name, COLUMNS)
    return IngestResult(EvidenceRows([StoredColumns(doc.columns)], numbered=False),
                        [*doc.problems, *doc.read_problems],
                        [SourceInfo.from_dict(s) for s in doc.sources])
