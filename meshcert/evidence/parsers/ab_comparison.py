"""Adaptive and mixed A/B comparison.json (spec section 9).

Adaptive: admitted iff `comparison_admitted` is true, `error` is empty and `status` is
`adaptive_matrix_admitted` (a parity mismatch is an error). Mixed: only `comparison.qualified`
true counts (`mixed_matrix_completed` is not enough). A refused file keeps no rows, and its
refusal names every field and value that decided it (`comparison_admitted: false, status:
adaptive_matrix_failed, error: "<the producer's own text>"`).
Bad input is a problem at its line, never a row: a median that is not a number, a ci95 that
is not [lower, upper] or has lower > upper or leaves out the median, a non-number round
delta (NaN / Infinity tokens refuse the whole file, as everywhere).
Rows: one `ab_delta` row per metric of `comparison.paired_delta_percent` (value = the median
delta in %, `extra`: ci95 and round_deltas), one `mesh_metric` row per numeric field of each
cell's summary (`params`: version and round). The comparison's setup (old, new) is `params`.
"""

from __future__ import annotations

import json
from typing import Any

from meshcert.evidence.parsers.base import AB_COMPARISON, ParsedFile, Row
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
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


def _refusal(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Why the comparison is not evidence: (pointer, `field: value`) of every field that says
    so, in the order they decide; empty when it is admitted."""
    comparison = obj(doc, "comparison")
    status = doc.get("status")
    said: list[tuple[str, str]] = []
    if (isinstance(status, str) and status.startswith("mixed")) or "qualified" in comparison:
        if comparison.get("qualified") is not True:
            said.append(("/comparison/qualified",
                         f"comparison.qualified: {json.dumps(comparison.get('qualified'))}"))
            if status is not None:
                said.append(("/status", f"status: {status}"))
        return said
    if doc.get("comparison_admitted") is not True:
        said.append(("/comparison_admitted",
                     f"comparison_admitted: {json.dumps(doc.get('comparison_admitted'))}"))
    if status is not None and status != "adaptive_matrix_admitted":
        said.append(("/status", f"status: {status}"))
    if doc.get("error"):
        said.append(("/error", f"error: {json.dumps(doc['error'])}"))
    parity = comparison.get("output_parity")
    if parity is False or (isinstance(parity, dict) and parity.get("matches") is False):
        said.append(("/comparison/output_parity",
                     f"comparison.output_parity: {json.dumps(parity)}"))
    return said


def _interval(body: dict[str, Any], where: str) -> tuple[list[float] | None, str | None]:
    """(ci95, why it is unusable) of one metric's paired delta."""
    ci = body.get("ci95")
    if ci is None:
        return None, None
    if not (isinstance(ci, list) and len(ci) == 2 and all(number(v) is not None for v in ci)):
        return None, f"{where}/ci95 = {json.dumps(ci)} is not an interval [lower, upper]"
    low, high = float(ci[0]), float(ci[1])
    if low > high:
        return None, f"{where}/ci95 = [{low:g}, {high:g}]: lower > upper"
    median = float(body["median"])
    if not low <= median <= high:
        return None, f"{where}/median = {median:g} lies outside its ci95 [{low:g}, {high:g}]"
    return [low, high], None


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(AB_COMPARISON)
    doc = load(text, source, out, "A/B comparison")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    lines = JsonLines(text)
    refused = _refusal(doc)
    if refused:
        fields = ", ".join(said for _, said in refused)
        what = ("the mixed prefill comparison is not qualified" if "qualified" in fields
                else "the comparison was not admitted")
        refuse(out, source, lines.line(refused[0][0]), fields, f"{what} ({fields})")
        return out
    meta = obj(doc, "metadata")
    setup = {"old": meta.get("old"), "new": meta.get("new"), "kind": doc.get("kind")}
    params, pdict = setup_params(setup)
    comparison = obj(doc, "comparison")
    deltas = comparison.get("paired_delta_percent")
    for metric, body in (deltas.items() if isinstance(deltas, dict) else ()):
        where = pointer("comparison", "paired_delta_percent", metric)
        line = lines.line(where)
        if not isinstance(body, dict) or number(body.get("median")) is None:
            shown = body.get("median") if isinstance(body, dict) else body
            out.problem(source, line, f"{where} = {json.dumps(shown)[:80]}",
                        f"paired delta of {metric} has no numeric median (no decision from it)")
            continue
        ci95, wrong = _interval(body, where)
        rounds = items(body, "round_deltas")
        if wrong is None and not all(number(v) is not None for v in rounds):
            wrong = f"{where}/round_deltas = {json.dumps(rounds)[:80]} holds a non-number"
        if wrong is not None:
            out.problem(source, line, wrong, f"{wrong} (no decision from {metric})")
            continue
        out.rows.append(Row(line, AB_COMPARISON, AB_DELTA, op="A/B comparison", params=params,
                            param_dict=pdict, metric=metric, value=float(body["median"]),
                            extra={"unit": "%", "pointer": where + "/median", "ci95": ci95,
                                   "round_deltas": [float(v) for v in rounds],
                                   "rounds": meta.get("rounds")}))
    cells = items(doc, "cells")
    for i, cell in enumerate(cells):
        if isinstance(cell, dict):
            cell_setup = {**setup, "version": cell.get("version"), "round": cell.get("round")}
            MetricRows(out, source, AB_COMPARISON, "A/B cell", cell_setup, lines=lines).add_all(
                cell.get("summary"), pointer("cells", i, "summary"))
    return out
