"""metrics-server run report.json and `emit-fixture` output (spec section 6).

report.json has no timings: rows for `counts{spans, requests, stages}` and
`telemetry_loss{dropped_events, export_errors}`. Telemetry loss above zero means spans are
missing: the report is refused (a count of spans that lost some is no evidence of what ran).
`emit-fixture` prints `emitted fixture span for run_id=X`: never evidence.
"""

from __future__ import annotations

import re

from meshcert.evidence.parsers.base import METRICS_SERVER, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    MetricRows,
    items,
    load,
    number,
    obj,
    pointer,
    refuse,
    refuse_debug,
)

FIXTURE_LINE = re.compile(r"emitted fixture span for run_id=(\S+)")


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(METRICS_SERVER)
    fixture = FIXTURE_LINE.search(text)
    if fixture is not None:
        refuse(out, source, text.count("\n", 0, fixture.start()) + 1, fixture.group(0),
               "metrics-server emit-fixture output is a fixture emitter, never a measured run")
        return out
    doc = load(text, source, out, "metrics-server report")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    loss = obj(doc, "telemetry_loss")
    lost = {k: number(v) for k, v in loss.items() if (number(v) or 0) > 0}
    if lost:
        flags = ", ".join(f"{k}={v:g}" for k, v in lost.items())
        refuse(out, source, 1, f"telemetry_loss: {flags}", f"telemetry lost ({flags}); the "
               "spec allows none")
        return out
    stages = items(doc, "stages")
    hosts = sorted({str(s.get("attributes", {}).get("host")) for s in stages
                    if isinstance(s, dict) and isinstance(s.get("attributes"), dict)
                    and s["attributes"].get("host") is not None})
    rows = MetricRows(out, source, METRICS_SERVER, "metrics-server report",
                      {"run_id": doc.get("run_id"), "hosts": hosts or None})
    rows.add_all(doc.get("counts"), pointer("counts"))
    rows.add_all(loss, pointer("telemetry_loss"))
    return out
