"""The automation's competitive benchmark: report.json and promotion.json (spec section 7).

report.json: `report_complete: false` is a partial report: refused, naming the field. Rows:
one per cell and numeric field of its `rows[i].throughput` (at its own line), the setup key
being the cell (platform, model, workload, arm, concurrency, output_tokens) and
capacity_policy, the row's `parity` in `extra`; a row with `complete: false` is skipped with a
problem; a cell given twice is a problem and neither row is used (which is the measurement is
unknown). promotion.json `[{platform, model,
candidates[{arm, synthetic_mean_percent, thoughtworks_mean_percent, eligible}], winner}]`: a
row per candidate's numeric field with `eligible` and the group's `winner` in `extra` (a
winner is a candidate, never a promotion: `meshcert.evidence.promotion` says what meshcert makes of
it).
"""

from __future__ import annotations

import json
from typing import Any

from meshcert.evidence.parsers.base import COMPETITIVE, PROMOTION, REJECTED, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
    MetricRows,
    items,
    load,
    obj,
    pointer,
    refuse,
    refuse_debug,
)

CELL_KEYS = ("platform", "model", "workload", "arm", "concurrency", "output_tokens")


def parse_report(text: str, source: str) -> ParsedFile:
    out = ParsedFile(COMPETITIVE)
    doc = load(text, source, out, "competitive report")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    lines = JsonLines(text)
    complete = doc.get("report_complete")
    if complete is not True:
        refuse(out, source, lines.line("/report_complete"),
               f"report_complete: {json.dumps(complete)}",
               f"report_complete: {json.dumps(complete)} (a partial competitive report; "
               "only a complete one is evidence)")
        return out
    rows = items(doc, "rows")
    duplicates = _duplicate_cells(rows)
    for i, row in enumerate(rows):
        where = pointer("rows", i)
        if not isinstance(row, dict):
            continue
        cell = obj(row, "cell")
        if i in duplicates:
            same = ", ".join(pointer("rows", j) for j in duplicates[i])
            out.problem(source, lines.line(where + "/cell"), f"{where}/cell = {_cell_text(cell)}",
                        f"duplicate cell: the same cell is given at {same}; none of their values "
                        "is used (which one is the measurement is unknown)")
            continue
        setup: dict[str, Any] = {k: cell.get(k) for k in CELL_KEYS}
        setup["capacity_policy"] = row.get("capacity_policy")
        if row.get("complete") is False:
            out.problem(source, lines.line(where + "/complete"), f"{where}/complete = false",
                        "competitive row with complete: false skipped (not evidence)", REJECTED)
            continue
        metrics = MetricRows(out, source, COMPETITIVE, "competitive benchmark", setup,
                             lines=lines)
        if isinstance(row.get("parity"), bool):
            metrics.flags["parity"] = row["parity"]
        throughput = row.get("throughput")
        if isinstance(throughput, dict):
            metrics.add_all(throughput, where + "/throughput")
        else:
            metrics.add("throughput", throughput, where + "/throughput", unit="tok/s")
    return out


def _cell_text(cell: dict[str, Any]) -> str:
    return ",".join(f"{k}={cell.get(k)}" for k in CELL_KEYS)


def _duplicate_cells(rows: list[Any]) -> dict[int, list[int]]:
    """Row index -> every row index of its cell (and capacity policy), for the cells given
    more than once."""
    by_cell: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        if isinstance(row, dict):
            key = json.dumps([obj(row, "cell").get(k) for k in CELL_KEYS]
                             + [row.get("capacity_policy")], sort_keys=True, default=str)
            by_cell.setdefault(key, []).append(i)
    return {i: same for same in by_cell.values() if len(same) > 1 for i in same}


def parse_promotion(text: str, source: str) -> ParsedFile:
    out = ParsedFile(PROMOTION)
    doc = load(text, source, out, "promotion.json")
    if doc is None:
        return out
    groups = doc if isinstance(doc, list) else [doc] if isinstance(doc, dict) else []
    lines = JsonLines(text)
    for g, group in enumerate(groups):
        base = pointer(g) if isinstance(doc, list) else ""
        if not isinstance(group, dict):
            continue
        candidates = items(group, "candidates")
        for c, cand in enumerate(candidates):
            if not isinstance(cand, dict):
                continue
            setup = {"platform": group.get("platform"), "model": group.get("model"),
                     "arm": cand.get("arm")}
            extra = {"eligible": cand.get("eligible") is True, "winner": group.get("winner"),
                     "group": g}
            rows = MetricRows(out, source, PROMOTION, "competitive promotion", setup,
                              lines=lines)
            for key, value in cand.items():
                rows.add(key, value, base + pointer("candidates", c, key), extra=extra)
    return out
