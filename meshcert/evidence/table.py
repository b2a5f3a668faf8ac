"""The evidence table as a pandas DataFrame: built from parser output (`table_from_parsed`)
or from columns (`table_from_columns`), joined, samples numbered, and back to records.

The columns, their dtypes and meaning: `meshcert.evidence.columns` (re-exported here).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from meshcert.evidence.columns import COLUMNS, DTYPES, MEASUREMENT_KEY
from meshcert.evidence.parsers.base import ROW_FIELDS, Const, ParsedFile, Row


def empty_table() -> pd.DataFrame:
    """A table with every column, the right dtypes and no rows."""
    return table_from_columns({c: [] for c in COLUMNS})


Chunk = Sequence[Any] | Const
_SHARED_EXTRA = Row._field_defaults["extra"]      # the NamedTuple default: give rows their own


def _chunk(dtype: str, chunk: Chunk) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, mask or None) of one chunk as numpy arrays."""
    n = len(chunk)
    if isinstance(chunk, Const):
        value = chunk.value
        if dtype == "object":
            return np.full(n, value, dtype=object), None
        if dtype in ("Int64", "boolean"):
            numpy_dtype = "int64" if dtype == "Int64" else "bool"
            if value is None:
                return np.zeros(n, dtype=numpy_dtype), np.ones(n, dtype=bool)
            return np.full(n, value, dtype=numpy_dtype), np.zeros(n, dtype=bool)
        return np.full(n, np.nan if value is None else value, dtype=dtype), None
    if dtype == "object":
        out = np.empty(n, dtype=object)
        out[:] = chunk if isinstance(chunk, list) else list(chunk)
        return out, None
    if dtype in ("Int64", "boolean"):
        floats = np.array(chunk, dtype="float64")          # None -> NaN
        mask = np.isnan(floats)
        values = np.where(mask, 0.0, floats)
        return values.astype("int64" if dtype == "Int64" else "bool"), mask
    return np.array(chunk, dtype=dtype), None               # float64: None -> NaN


_NUMPY_DTYPE = {"Int64": "int64", "boolean": "bool"}


def _placed(dtype: str, chunks: Sequence[Chunk], where: np.ndarray | None
            ) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, mask or None) of the chunks concatenated; `where`: the final row of each
    concatenated row (None: in order). Each chunk is written once, straight to its rows."""
    if len(chunks) == 1 and where is None:
        return _chunk(dtype, chunks[0])
    n = sum(len(c) for c in chunks)
    values = np.empty(n, dtype=_NUMPY_DTYPE.get(dtype, dtype))
    mask = np.zeros(n, dtype=bool) if dtype in _NUMPY_DTYPE else None
    start = 0
    for chunk in chunks:
        size = len(chunk)
        rows = slice(start, start + size) if where is None else where[start:start + size]
        start += size
        if isinstance(chunk, Const) and not isinstance(chunk.value, tuple | list | dict):
            value = chunk.value             # a scalar: fills its rows without a temporary
            if value is None and mask is not None:
                mask[rows] = True
                value = 0
            elif value is None and dtype != "object":
                value = np.nan
            values[rows] = value
            continue
        part, part_mask = _chunk(dtype, chunk)
        values[rows] = part
        if mask is not None and part_mask is not None:
            mask[rows] = part_mask
    return values, mask


def _column(name: str, chunks: Sequence[Chunk], where: np.ndarray | None = None) -> Any:
    dtype = DTYPES[name]
    values, mask = _placed(dtype, chunks, where)
    if dtype == "object":
        return pd.Series(values, dtype=object, copy=False)   # no str-dtype inference
    if dtype == "Int64":
        return pd.arrays.IntegerArray(values, mask)
    if dtype == "boolean":
        return pd.arrays.BooleanArray(values, mask)
    return values


def table_from_columns(columns: Mapping[str, Sequence[Any]]) -> pd.DataFrame:
    """Build the table from equally long column lists (None for missing values)."""
    return table_from_chunks({name: [columns[name]] for name in COLUMNS})


def table_from_chunks(chunks: Mapping[str, Sequence[Chunk]], where: np.ndarray | None = None
                      ) -> pd.DataFrame:
    """Build the table from per-column chunks (lists or Const), concatenated in order, or
    row i of the concatenation at row where[i]."""
    if not any(len(c) for c in chunks["source_line"]):
        return pd.DataFrame({name: _column(name, [[]]) for name in COLUMNS})
    return pd.DataFrame({name: _column(name, [c for c in chunks[name] if len(c)] or [[]],
                                       where) for name in COLUMNS})


def table_from_parsed(parts: Sequence[tuple[ParsedFile, str, str, str]]) -> pd.DataFrame:
    """Build the table from parser output: parts of (parsed file, source_file, variant,
    run_id). Rows come out in input order, sorted by line within each file; a file-level
    build commit fills the rows that have none."""
    chunks: dict[str, list[Chunk]] = {name: [] for name in COLUMNS}
    counts: list[int] = []
    for parsed, file, part_variant, part_run in parts:
        n = 0
        pieces: list[Mapping[str, Chunk]] = []
        if parsed.rows:
            lists = dict(zip(ROW_FIELDS, (list(c) for c in zip(*parsed.rows, strict=True)),
                             strict=True))
            lists["extra"] = [{} if e is _SHARED_EXTRA else e for e in lists["extra"]]
            pieces.append(lists)
        pieces.extend(parsed.batches)
        for piece in pieces:
            size = len(piece["source_line"])
            for name in ROW_FIELDS:
                column = piece[name]
                if name == "build_commit" and parsed.build_commit:
                    column = _fill(column, parsed.build_commit)
                chunks[name].append(column)
            n += size
        chunks["source_file"].append(Const(file, n))
        chunks["variant"].append(Const(part_variant, n))
        chunks["run_id"].append(Const(part_run, n))
        counts.append(n)
    if not sum(counts):
        return empty_table()
    lines = _placed("int64", [c for c in chunks["source_line"] if len(c)], None)[0]
    files = np.repeat(np.arange(len(counts)), counts)
    where = None
    if len(lines) > 1 and np.any((np.diff(lines) < 0) & (np.diff(files) == 0)):
        order = np.lexsort((lines, files))     # stable: by file, then line
        where = np.empty_like(order)
        where[order] = np.arange(len(order))
    return table_from_chunks(chunks, where)


def _fill(column: Chunk, value: str) -> Chunk:
    if isinstance(column, Const):
        return column if column.value else Const(value, column.n)
    return [v or value for v in column]


def concat_tables(tables: Sequence[pd.DataFrame]) -> pd.DataFrame:
    tables = [t for t in tables if len(t)]
    if not tables:
        return empty_table()
    if len(tables) == 1:
        return tables[0].reset_index(drop=True)
    return pd.concat(tables, ignore_index=True).astype(DTYPES)[list(COLUMNS)]


def number_samples(table: pd.DataFrame) -> pd.DataFrame:
    """Give supported perf rows their ordinal among rows of the same measurement (1, 2, ...),
    in table order: repeated runs become samples 1..n of one measurement."""
    mask = (table["kind"].to_numpy() == "perf") & \
        table["supported"].to_numpy(dtype=bool, na_value=False)
    where = np.flatnonzero(mask)
    if not len(where):
        return table
    key = np.zeros(len(where), dtype="int64")
    for column in MEASUREMENT_KEY:
        codes, uniques = pd.factorize(table[column].to_numpy()[where], use_na_sentinel=False)
        key, _ = pd.factorize(key * (len(uniques) + 1) + codes)
    order = np.argsort(key, kind="stable")
    ranked = key[order]
    first = np.r_[True, ranked[1:] != ranked[:-1]]
    position = np.arange(len(order))
    rank = position - np.maximum.accumulate(np.where(first, position, 0)) + 1
    ordinals = np.empty(len(order), dtype="int64")
    ordinals[order] = rank
    sample = table["sample"].to_numpy(dtype="float64", na_value=np.nan)
    sample[where] = ordinals
    table["sample"] = pd.array(sample, dtype="Int64")
    return table


def table_records(table: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts of plain Python values (None for missing), for JSON."""
    columns: dict[str, list[Any]] = {}
    for name in COLUMNS:
        values = table[name].astype(object).tolist()
        columns[name] = [None if v is None or v is pd.NA or (isinstance(v, float) and v != v)
                         else v for v in values]
    return [dict(zip(COLUMNS, values, strict=True))
            for values in zip(*(columns[c] for c in COLUMNS), strict=True)]
