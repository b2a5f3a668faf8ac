"""Which format is this text? Decided by content (the rules of `registry.EVIDENCE_FORMATS`, in their
order); the file name only when no content rule holds."""

from __future__ import annotations

from meshcert.evidence.parsers.base import UNKNOWN
from meshcert.evidence.parsers.probe import Probe
from meshcert.evidence.parsers.registry import RULES


def detect(text: str, name: str = "") -> str:
    """One of the format names in `meshcert.evidence.parsers.base` (UNKNOWN when nothing fits)."""
    probe = Probe(text, name)
    keys = None
    for rule, fmt in RULES:
        if rule.top is not None and probe.json_like:
            if keys is None:
                doc = probe.doc
                keys = doc.keys() if type(doc) is dict else ()
            if keys and rule.top.isdisjoint(keys):
                continue            # the cheap first look: none of its top-level keys
        if rule.scope != "name" and rule.test(probe):
            return fmt
    if len(probe.text) > len(probe.head):
        probe.body = probe.text
        for rule, fmt in RULES:
            if rule.scope == "body" and rule.test(probe):
                return fmt
    for rule, fmt in RULES:
        if rule.scope == "name" and rule.test(probe):
            return fmt
    return UNKNOWN
