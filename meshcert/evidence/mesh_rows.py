"""The mesh-llm rows of a report: one `MeshMetricRow` per (format, op, setup, metric), with
every value's file:line#pointer (never pooled across setups: the setup is the key)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from meshcert.evidence.parsers.base import MESH_FORMAT_NAMES
from meshcert.evidence.report import MeshMetricRow

MAX_SOURCES = 20


def mesh_rows(records: Iterable[Mapping[str, Any]]) -> list[MeshMetricRow]:
    groups: dict[tuple[str, str, str, str], list[Mapping[str, Any]]] = {}
    for r in records:
        if r.get("format") in MESH_FORMAT_NAMES and r.get("value") is not None:
            key = (str(r["format"]), str(r.get("op")), str(r.get("params") or ""),
                   str(r.get("metric")))
            groups.setdefault(key, []).append(r)
    out = []
    for (fmt, op, params, metric), rows in groups.items():
        values = np.asarray([float(r["value"]) for r in rows])
        extra = rows[0].get("extra") or {}
        out.append(MeshMetricRow(
            format=fmt, op=op, params=params, metric=metric, unit=str(extra.get("unit", "")),
            n=len(rows), median=float(np.median(values)), min=float(values.min()),
            max=float(values.max()),
            sources=[f"{r.get('source_file')}:{r.get('source_line')}#"
                     f"{(r.get('extra') or {}).get('pointer', '')}" for r in rows[:MAX_SOURCES]]))
    return out
