"""skippy-bench token-lengths summary (spec section 10): promotable only with
`exceeds_context` 0 (otherwise refused). Rows: every numeric top-level field."""

from __future__ import annotations

from meshcert.evidence.parsers.base import TOKEN_LENGTHS, ParsedFile
from meshcert.evidence.parsers.mesh_json import MetricRows, load, number, refuse, refuse_debug


def parse(text: str, source: str) -> ParsedFile:
    out = ParsedFile(TOKEN_LENGTHS)
    doc = load(text, source, out, "token-lengths summary")
    if not isinstance(doc, dict) or refuse_debug(text, source, out):
        return out
    exceeds = number(doc.get("exceeds_context"))
    if exceeds:
        refuse(out, source, 1, f"exceeds_context={exceeds:g}", f"{exceeds:g} prompt(s) exceed "
               "the context: the corpus is not promotable")
        return out
    setup = {k: doc.get(k) for k in ("corpus", "model", "ctx_size") if k in doc}
    MetricRows(out, source, TOKEN_LENGTHS, "skippy-bench token-lengths", setup).add_all(doc, "")
    return out
