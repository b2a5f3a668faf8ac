"""skippy-bench `local-single` and `local-split-*` (spec section 3): parity, no timings.

local-single `{run_id, model_identity, text_response, report_counts}`: one row per numeric
`report_counts` field. local-split-compare `{mode, model_identity, matches, baseline, split
{boundary{payload_bytes, wire_payload_bytes}}}`: a `mesh_parity` row (`passed` = `matches`) and
the boundary's numeric fields.
"""

from __future__ import annotations

from meshcert.evidence.parsers.base import SKIPPY_LOCAL, ParsedFile, Row
from meshcert.evidence.parsers.mesh_json import (
    PARITY,
    JsonLines,
    MetricRows,
    load,
    model_identity,
    obj,
    pointer,
    refuse_debug,
    setup_params,
)


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(SKIPPY_LOCAL)
    doc = load(text, source, out, "skippy-bench local run")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    setup = model_identity(doc.get("model_identity"))
    if "matches" in doc:
        mode = str(doc.get("mode") or "local-split-compare")
        setup["mode"] = mode
        params, pdict = setup_params(setup)
        matches = doc.get("matches")
        out.rows.append(Row(1, SKIPPY_LOCAL, PARITY, op=f"skippy-bench {mode}", params=params,
                            param_dict=pdict, passed=matches if isinstance(matches, bool)
                            else None, extra={"pointer": "/matches", "unit": "bool"}))
        split = obj(doc, "split")
        rows = MetricRows(out, source, SKIPPY_LOCAL, f"skippy-bench {mode}", setup,
                          lines=JsonLines(text))
        rows.add_all(split.get("boundary"), pointer("split", "boundary"))
        return out
    setup["mode"] = "local-single"
    rows = MetricRows(out, source, SKIPPY_LOCAL, "skippy-bench local-single", setup,
                      lines=JsonLines(text))
    rows.add_all(doc.get("report_counts"), pointer("report_counts"))
    return out
