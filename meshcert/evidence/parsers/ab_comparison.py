"""Adaptive and mixed A/B comparison.json (spec section 9).

Adaptive: admitted iff `comparison_admitted` is true, `error` is empty and `status` is
`adaptive_matrix_admitted` (a parity mismatch is an error). Mixed: only `comparison.qualified`
true counts (`mixed_matrix_completed` is not enough). A refused file keeps no rows.
Rows: one `ab_delta` row per metric of `comparison.paired_delta_percent` (value = the median
delta in %, `extra`: ci95 and round_deltas), one `mesh_metric` row per numeric field of each
cell's summary (`params`: version and round). The comparison's setup (old, new) is `params`.
"""

from __future__ import annotations

from typing import Any

from meshcert.evidence.parsers.base import AB_COMPARISON, ParsedFile, Row
from meshcert.evidence.parsers.mesh_json import (
    MetricRows,
    items,
    load,
    number,
    obj,
    pointer,
    refuse,
    refuse_debug,
    setup_params,
)

AB_DELTA = "ab_delta"


def _admitted(doc: dict[str, Any]) -> tuple[bool, str, str]:
    """(admitted, flag, reason)."""
    comparison = obj(doc, "comparison")
    status = str(doc.get("status") or "")
    if status.startswith("mixed") or "qualified" in comparison:
        if comparison.get("qualified") is not True:
            return False, f"comparison.qualified={comparison.get('qualified')!r}", (
                "a mixed prefill matrix counts only when comparison.qualified is true "
                f"(status {status or 'none'} is not enough)")
        return True, "", ""
    if doc.get("error"):
        return False, f"error={str(doc.get('error'))[:80]!r}", "the comparison reports an error"
    if doc.get("comparison_admitted") is not True:
        return False, f"comparison_admitted={doc.get('comparison_admitted')!r}", \
            "the comparison was not admitted"
    if status and status != "adaptive_matrix_admitted":
        return False, f"status={status}", "the adaptive matrix was not admitted"
    parity = comparison.get("output_parity")
    if parity is False or (isinstance(parity, dict) and parity.get("matches") is False):
        return False, "output_parity", "the arms' outputs differ (a parity mismatch)"
    return True, "", ""


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(AB_COMPARISON)
    doc = load(text, source, out, "A/B comparison")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    admitted, flag, reason = _admitted(doc)
    if not admitted:
        refuse(out, source, 1, flag, reason)
        return out
    meta = obj(doc, "metadata")
    setup = {"old": meta.get("old"), "new": meta.get("new"), "kind": doc.get("kind")}
    params, pdict = setup_params(setup)
    comparison = obj(doc, "comparison")
    deltas = comparison.get("paired_delta_percent")
    for metric, body in (deltas.items() if isinstance(deltas, dict) else ()):
        if not isinstance(body, dict) or number(body.get("median")) is None:
            continue
        where = pointer("comparison", "paired_delta_percent", metric)
        ci = body.get("ci95")
        rounds = [float(v) for v in items(body, "round_deltas") if number(v) is not None]
        ci95 = [float(v) for v in ci] if isinstance(ci, list) and len(ci) == 2 and all(
            number(v) is not None for v in ci) else None
        out.rows.append(Row(1, AB_COMPARISON, AB_DELTA, op="A/B comparison", params=params,
                            param_dict=pdict, metric=metric, value=float(body["median"]),
                            extra={"unit": "%", "pointer": where + "/median", "ci95": ci95,
                                   "round_deltas": rounds, "rounds": meta.get("rounds")}))
    cells = items(doc, "cells")
    for i, cell in enumerate(cells):
        if isinstance(cell, dict):
            cell_setup = {**setup, "version": cell.get("version"), "round": cell.get("round")}
            MetricRows(out, source, AB_COMPARISON, "A/B cell", cell_setup).add_all(
                cell.get("summary"), pointer("cells", i, "summary"))
    return out
