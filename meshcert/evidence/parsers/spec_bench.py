"""llama-spec-bench `--json`, and a DFlash run's stderr (spec section 5).

JSON: every numeric field of `summary` (op `llama-spec-bench`); the setup key is target, draft,
strategy, window, ctx, max_new_tokens. The strategy is only on stderr (`attached <dflash|dflash2>
draft block_size=N ...`): a sibling `<stem>.stderr` / `<stem>.stderr.log` / `stderr.log` gives it,
else it is `draft-model`. A stderr log on its own gives the DFlash summary lines:
`rate=P% mean_accepted/window=X` (accept_rate, mean_accepted_tokens_per_window) and
`target/draft speculative <ms> <tok/s> <speedup>x`. KV is always f16. Not speedup evidence:
`mismatched_prompts` > 0 (the file is refused).
"""

from __future__ import annotations

import re
from pathlib import Path

from meshcert.evidence.parsers.base import SPEC_BENCH, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
    MetricRows,
    load,
    number,
    obj,
    pointer,
    refuse,
    refuse_debug,
)

ATTACHED = re.compile(r"attached (dflash2?) draft block_size=(\d+)")
_RATE = re.compile(r"rate=([0-9.]+)%\s+mean_accepted/window=([0-9.]+)")
_SPECULATIVE = re.compile(r"target/draft speculative\s+([0-9.eE+-]+)\s*(?:ms)?\s+"
                          r"([0-9.eE+-]+)\s*(?:tok/s)?\s+([0-9.eE+-]+)x")


def strategy_from_stderr(text: str) -> tuple[str, int | None] | None:
    found = ATTACHED.search(text)
    return (found.group(1), int(found.group(2))) if found else None


def _sibling_strategy(source: str) -> tuple[str, int | None]:
    path = Path(source)
    stem = path.name.removesuffix(".json")
    for name in (f"{stem}.stderr", f"{stem}.stderr.log", "stderr.log"):
        try:
            found = strategy_from_stderr((path.parent / name).read_text(encoding="utf-8",
                                                                         errors="replace"))
        except OSError:
            continue
        if found is not None:
            return found
    return "draft-model", None


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(SPEC_BENCH)
    if not text.lstrip().startswith("{"):
        return _parse_stderr(text, source, out)
    doc = load(text, source, out, "llama-spec-bench JSON")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    summary = obj(doc, "summary")
    mismatched = number(summary.get("mismatched_prompts"))
    if mismatched:
        refuse(out, source, 1, f"mismatched_prompts={mismatched:g}", "speculative output "
               f"differs from the baseline on {mismatched:g} prompt(s): not speedup evidence")
        return out
    strategy, block = _sibling_strategy(source)
    setup = {"target": Path(str(doc.get("target_model_path") or "")).name or None,
             "draft": Path(str(doc.get("draft_model_path") or "")).name or None,
             "strategy": strategy, "block_size": block,
             "speculative_window": doc.get("speculative_window"),
             "ctx_size": doc.get("ctx_size"), "max_new_tokens": doc.get("max_new_tokens"),
             "cache_type_k": "f16", "cache_type_v": "f16"}
    MetricRows(out, source, SPEC_BENCH, "llama-spec-bench", setup,
               lines=JsonLines(text)).add_all(
        summary, pointer("summary"))
    return out


def _parse_stderr(text: str, source: str, out: ParsedFile) -> ParsedFile:
    attached = strategy_from_stderr(text)
    if attached is None:
        out.problem(source, None, text[:120], "llama-spec-bench stderr without an `attached "
                    "dflash` line", "unknown")
        return out
    setup = {"strategy": attached[0], "block_size": attached[1], "cache_type_k": "f16",
             "cache_type_v": "f16"}
    for lineno, line in enumerate(text.split("\n"), 1):
        rows = MetricRows(out, source, SPEC_BENCH, "llama-spec-bench", setup, line=lineno)
        rate = _RATE.search(line)
        if rate:
            rows.add("accept_rate", float(rate.group(1)) / 100, f"line {lineno}: rate",
                     extra={"converted": "rate % / 100"})
            rows.add("mean_accepted_tokens_per_window", float(rate.group(2)),
                     f"line {lineno}: mean_accepted/window")
        spec = _SPECULATIVE.search(line)
        if spec:
            rows.add("speculative_target_decode_ms", float(spec.group(1)),
                     f"line {lineno}: speculative ms")
            rows.add("speculative_total_tokens_per_second", float(spec.group(2)),
                     f"line {lineno}: speculative tok/s")
            rows.add("speculative_speedup_vs_baseline", float(spec.group(3)),
                     f"line {lineno}: speedup")
    return out
