"""The automation's competitive benchmark: report.json and promotion.json (spec section 7).

report.json: `report_complete: false` is a partial report: refused. Rows: every numeric field
of each `rows[i].throughput` (and the row's own numbers), the setup key being the cell
(platform, model, workload, arm, concurrency, output_tokens) and capacity_policy; a row with
`complete: false` is skipped with a problem. promotion.json `[{platform, model,
candidates[{arm, synthetic_mean_percent, thoughtworks_mean_percent, eligible}], winner}]`: a
row per candidate's numeric field with `eligible` and the group's `winner` in `extra` (a
winner is a candidate, never a promotion: `meshcert.evidence.promotion` says what meshcert makes of
it).
"""

from __future__ import annotations

from typing import Any

from meshcert.evidence.parsers.base import COMPETITIVE, PROMOTION, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
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
    if doc.get("report_complete") is not True:
        refuse(out, source, 1, f"report_complete={doc.get('report_complete')!r}",
               "the competitive report is partial (report_complete is not true)")
        return out
    rows = items(doc, "rows")
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            continue
        cell = obj(row, "cell")
        setup: dict[str, Any] = {k: cell.get(k) for k in CELL_KEYS}
        setup["capacity_policy"] = row.get("capacity_policy")
        if row.get("complete") is False:
            out.problem(source, 1, pointer("rows", i, "complete"), "competitive row with "
                        "complete=false skipped (not evidence)", "rejected")
            continue
        metrics = MetricRows(out, source, COMPETITIVE, "competitive benchmark", setup)
        throughput = row.get("throughput")
        if isinstance(throughput, dict):
            metrics.add_all(throughput, pointer("rows", i, "throughput"))
        else:
            metrics.add("throughput", throughput, pointer("rows", i, "throughput"),
                        unit="tok/s")
    return out


def parse_promotion(text: str, source: str) -> ParsedFile:
    out = ParsedFile(PROMOTION)
    doc = load(text, source, out, "promotion.json")
    if doc is None:
        return out
    groups = doc if isinstance(doc, list) else [doc] if isinstance(doc, dict) else []
    for g, group in enumerate(groups):
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
            rows = MetricRows(out, source, PROMOTION, "competitive promotion", setup)
            for key, value in cand.items():
                rows.add(key, value, pointer(g, "candidates", c, key), extra=extra)
    return out
