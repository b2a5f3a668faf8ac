"""skippy-bench token-lengths summary (spec section 10): promotable only with
`exceeds_context` 0. Rows: every numeric top-level field, at its line. `exceeds_context` > 0:
the rows stay and each carries `extra["flag"]` (`exceeds_context=3`), with one `flagged`
problem (the corpus is not promotable). A negative count or `fits_context + exceeds_context`
other than `row_count`, is a problem naming the fields, never a row of that value.
"""

from __future__ import annotations

from meshcert.evidence.parsers.base import FLAGGED, TOKEN_LENGTHS, ParsedFile
from meshcert.evidence.parsers.mesh_json import (
    JsonLines,
    MetricRows,
    load,
    number,
    pointer,
    refuse_debug,
)

_COUNTS = ("row_count", "fits_context", "exceeds_context")
# the setup key: the fields skippy-bench's TokenLengthSummary writes (sb/token_lengths.rs:
# model_path, prompt_corpus, ctx_size, generation_limit, enable_thinking), and the shorter
# `corpus` / `model` of hand-written summaries
_SETUP = ("model_path", "prompt_corpus", "corpus", "model", "ctx_size", "generation_limit",
          "enable_thinking")


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(TOKEN_LENGTHS)
    doc = load(text, source, out, "token-lengths summary")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    lines = JsonLines(text)
    setup = {k: doc.get(k) for k in _SETUP if k in doc}
    rows = MetricRows(out, source, TOKEN_LENGTHS, "skippy-bench token-lengths", setup,
                      lines=lines)
    exceeds = number(doc.get("exceeds_context"))
    if exceeds is not None and exceeds > 0:
        rows.flags["flag"] = f"exceeds_context={exceeds:g}"
        out.problem(source, lines.line("/exceeds_context"), f"exceeds_context = {exceeds:g}",
                    f"exceeds_context={exceeds:g}: {exceeds:g} prompt(s) exceed the context, "
                    "so the corpus is not promotable (flagged; its rows carry the flag)", FLAGGED)
    total, fits = number(doc.get("row_count")), number(doc.get("fits_context"))
    negative = [k for k in _COUNTS if (number(doc.get(k)) or 0) < 0]
    if negative:
        out.problem(source, lines.line(pointer(negative[0])), ", ".join(
            f"{k}={doc[k]}" for k in negative), f"negative count{'s' if len(negative) > 1 else ''}"
            f" {', '.join(negative)}: the counts cannot be trusted (none of {', '.join(_COUNTS)}"
            " is used)")
        rows.add_all(doc, "", skip=_COUNTS)
        return out
    if total is not None and fits is not None and exceeds is not None \
            and min(total, fits, exceeds) >= 0 and fits + exceeds != total:
        out.problem(source, lines.line("/row_count"), f"row_count={total:g}, fits_context="
                    f"{fits:g}, exceeds_context={exceeds:g}", "fits_context + exceeds_context is "
                    "not row_count: the counts contradict each other (none of them is used)")
        rows.add_all(doc, "", skip=_COUNTS)
        return out
    rows.add_all(doc, "")
    return out
