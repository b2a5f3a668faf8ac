"""metrics-server run report.json and `emit-fixture` output (spec section 6).

report.json has no timings: rows for `counts{spans, requests, stages}` and
`telemetry_loss{dropped_events, export_errors}`. Telemetry loss above zero means spans are
missing: the spec says flag it, so the rows stay and each carries the loss in
`extra["flag"]` (`telemetry_loss: dropped_events=3`), with one `flagged` problem at the loss's
line (its counts are no evidence of everything that ran).
`emit-fixture` prints `emitted fixture span for run_id=X`: never evidence.
"""

from __future__ import annotations

import re

from meshcert.evidence.parsers.base import FLAGGED, METRICS_SERVER, ParsedFile
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
    lines = JsonLines(text)
    loss = obj(doc, "telemetry_loss")
    lost = {k: number(v) for k, v in loss.items() if (number(v) or 0) > 0}
    stages = items(doc, "stages")
    hosts = sorted({str(s.get("attributes", {}).get("host")) for s in stages
                    if isinstance(s, dict) and isinstance(s.get("attributes"), dict)
                    and s["attributes"].get("host") is not None})
    rows = MetricRows(out, source, METRICS_SERVER, "metrics-server report",
                      {"run_id": doc.get("run_id"), "hosts": hosts or None}, lines=lines)
    if lost:
        flag = "telemetry_loss: " + ", ".join(f"{k}={v:g}" for k, v in lost.items())
        rows.flags["flag"] = flag
        out.problem(source, lines.line(pointer("telemetry_loss", next(iter(lost)))), flag,
                    f"{flag}: spans were lost, so these counts undercount the run (flagged; "
                    "its rows carry the flag)", FLAGGED)
    rows.add_all(doc.get("counts"), pointer("counts"))
    rows.add_all(loss, pointer("telemetry_loss"))
    return out
