"""skippy-bench focused runtime report: focused-runtime-report.json (spec section 2).

`mode: "schema-smoke"` (fixed 10/5/5 ms, 900.0/100.0 tok/s, outputs `schema-smoke-*.json`) is a
placeholder, never evidence. Rows: every numeric field of `summary`, `latency_ms`,
`throughput_tokens_per_second` (as `total_tokens_per_second` / `generated_tokens_per_second`)
and `token_counts`; the setup key is model identity, topology, stage count, hosts, scenario,
max_new_tokens and prompt_count.
"""

from __future__ import annotations

from meshcert.evidence.parsers.base import SKIPPY_FOCUSED, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
    MetricRows,
    load,
    model_identity,
    obj,
    pointer,
    refuse,
    refuse_debug,
)

SCENARIOS = ("cold-startup", "first-token", "steady-decode", "kv-warm-reuse")


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(SKIPPY_FOCUSED)
    doc = load(text, source, out, "focused runtime report")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    mode = doc.get("mode")
    outputs = obj(doc, "outputs")
    smoke_outputs = [v for v in outputs.values() if isinstance(v, str) and "schema-smoke" in v]
    if mode != "executed" or smoke_outputs:
        flag = f"mode={mode!r}" if mode != "executed" else f"outputs={smoke_outputs[0]}"
        refuse(out, source, 1, flag, f"focused runtime report with {flag} is a placeholder "
               "(schema-smoke prints fixed timings), not a measured run")
        return out
    scenario = doc.get("scenario")
    if scenario not in SCENARIOS:
        out.note("scenario.unknown")
    summary = obj(doc, "summary")
    setup = {**model_identity(doc.get("model_identity")), "topology_id": doc.get("topology_id"),
             "stage_count": doc.get("stage_count"),
             "hosts": doc.get("hosts") if isinstance(doc.get("hosts"), list) else None,
             "scenario": scenario, "max_new_tokens": doc.get("max_new_tokens",
                                                              summary.get("max_new_tokens")),
             "prompt_count": doc.get("prompt_count", summary.get("prompt_count"))}
    rows = MetricRows(out, source, SKIPPY_FOCUSED, "skippy-bench focused-runtime", setup,
                      lines=JsonLines(text))
    rows.add_all(summary, pointer("summary"))
    rows.add_all(doc.get("latency_ms"), pointer("latency_ms"))
    rows.add_all(doc.get("token_counts"), pointer("token_counts"))
    tput = doc.get("throughput_tokens_per_second")
    if isinstance(tput, dict):
        for key in ("total", "generated"):
            rows.add(f"{key}_tokens_per_second", tput.get(key),
                     pointer("throughput_tokens_per_second", key))
    return out
