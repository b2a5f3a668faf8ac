"""The evidence table before pandas: what the parsers and evidence JSON files gave, in order.

`ingest_files` hands its rows over as they are; the pandas DataFrame (`meshcert.evidence.table`) is
built from them on the first `EvidenceRows.table()`, so a caller that only counts rows (the
`meshcert evidence ingest` summary) never loads pandas or numpy.

The counts read the rows in the order the DataFrame has them (raw-file rows sorted by line
within each file, evidence JSON rows as stored less the runs already ingested) and leave out
missing values, as pandas' `value_counts` and `groupby` do.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from meshcert.evidence.gc_pause import gc_paused
from meshcert.evidence.parsers.base import Const, ParsedFile

if TYPE_CHECKING:
    import pandas as pd

Part = tuple[ParsedFile, str, str, str]
"""One raw file's parser output with its source_file, variant and run_id."""


@dataclass(frozen=True)
class ParsedParts:
    """Raw files' rows, in input order (one `table_from_parsed`)."""

    parts: list[Part]


@dataclass(frozen=True)
class StoredColumns:
    """An evidence JSON's rows as decoded columns, less the rows of `dropped_runs` (runs
    already ingested)."""

    columns: Mapping[str, Sequence[Any]]
    dropped_runs: frozenset[str] = frozenset()


Piece = ParsedParts | StoredColumns
Labels = tuple[Any, Any, Any]
"""(run_id, format, kind) of one row."""


@dataclass(frozen=True)
class RowCounts:
    """Rows per format, per kind and per kind of each run, as the ingest summary shows them:
    most first (ties in table order) for formats and kinds, table order within a run."""

    by_format: dict[str, int]
    by_kind: dict[str, int]
    kinds_by_run: dict[str, dict[str, int]]


class EvidenceRows:
    """The rows of one evidence table: pieces of parser output and evidence JSON columns,
    joined into the DataFrame on first use (then `number_samples` unless `numbered=False`),
    or a DataFrame that is already built (`of_table`)."""

    def __init__(self, pieces: Sequence[Piece] = (), numbered: bool = True) -> None:
        self._pieces = list(pieces)
        self._numbered = numbered   # False: the samples as stored (reading one evidence JSON)
        self._table: pd.DataFrame | None = None
        self._len = sum(_piece_len(p) for p in self._pieces)

    @classmethod
    def of_table(cls, table: pd.DataFrame) -> EvidenceRows:
        rows = cls()
        rows._table = table
        rows._len = len(table)
        return rows

    def __len__(self) -> int:
        return self._len

    def table(self) -> pd.DataFrame:
        """The pandas DataFrame (columns `meshcert.evidence.columns.COLUMNS`), built once."""
        if self._table is None:
            with gc_paused():
                self._table = self._build()
            self._pieces = []       # the DataFrame holds the rows now
        return self._table

    def _build(self) -> pd.DataFrame:
        from meshcert.evidence.table import concat_tables, empty_table, number_samples

        tables = [_piece_table(p) for p in self._pieces]
        table = concat_tables(tables) if tables else empty_table()
        return number_samples(table) if self._numbered else table

    @cached_property
    def counts(self) -> RowCounts:
        """Counted off (run_id, format, kind) of every row; values that are not text
        (missing) are not counted."""
        formats: dict[str, int] = {}
        kinds: dict[str, int] = {}
        by_run: dict[str, dict[str, int]] = {}
        for (run_id, fmt, kind), n in self._label_counts():
            if isinstance(fmt, str):
                formats[fmt] = formats.get(fmt, 0) + n
            if isinstance(kind, str):
                kinds[kind] = kinds.get(kind, 0) + n
                if isinstance(run_id, str):
                    run = by_run.setdefault(run_id, {})
                    run[kind] = run.get(kind, 0) + n
        return RowCounts(_most_first(formats), _most_first(kinds), by_run)

    def _label_counts(self) -> Iterator[tuple[Labels, int]]:
        """Rows per (run_id, format, kind), each in the order the table first has it."""
        if self._table is not None:
            yield from Counter(zip(*(self._table[c].tolist() for c in ("run_id", "format",
                                                                       "kind")),
                                   strict=True)).items()
            return
        for piece in self._pieces:
            if isinstance(piece, StoredColumns):
                dropped = piece.dropped_runs
                columns = piece.columns
                yield from Counter(labels for labels in zip(
                    columns["run_id"], columns["format"], columns["kind"], strict=True)
                    if labels[0] not in dropped).items()
                continue
            for parsed, _file, _variant, run_id in piece.parts:
                yield from (((run_id, fmt, kind), n)
                            for (fmt, kind), n in Counter(_formats_and_kinds(parsed)).items())


def _most_first(counts: dict[str, int]) -> dict[str, int]:
    return dict(sorted(counts.items(), key=lambda item: -item[1]))   # stable: ties in order


def _values(column: Sequence[Any] | Const) -> Sequence[Any]:
    return [column.value] * column.n if isinstance(column, Const) else column


def _formats_and_kinds(parsed: ParsedFile) -> list[tuple[Any, Any]]:
    """(format, kind) of one file's rows in table order: rows, then batches, sorted by line
    (stable), as `table_from_parsed` places them."""
    rows = parsed.rows
    lines = [r.source_line for r in rows]
    pairs = [(r.format, r.kind) for r in rows]
    for batch in parsed.batches:
        lines.extend(_values(batch["source_line"]))
        pairs.extend(zip(_values(batch["format"]), _values(batch["kind"]), strict=True))
    if lines != sorted(lines):
        pairs = [pairs[i] for i in sorted(range(len(lines)), key=lines.__getitem__)]
    return pairs


def _piece_len(piece: Piece) -> int:
    if isinstance(piece, ParsedParts):
        return sum(parsed.row_count for parsed, *_ in piece.parts)
    runs = piece.columns["run_id"]
    if not piece.dropped_runs:
        return len(runs)
    return sum(1 for run_id in runs if run_id not in piece.dropped_runs)


def _piece_table(piece: Piece) -> pd.DataFrame:
    from meshcert.evidence.table import table_from_columns, table_from_parsed

    if isinstance(piece, ParsedParts):
        return table_from_parsed(piece.parts)
    table = table_from_columns(piece.columns)
    if piece.dropped_runs:
        table = table[~table["run_id"].isin(sorted(piece.dropped_runs))]
    return table
