"""One parser per input format: pure functions `parse(text, source) -> ParsedFile`.

Every format is one entry of `registry.EVIDENCE_FORMATS` (name, recognising rules, parser, example):
`PARSERS` (format -> parser) and `detect` are derived from it; the evidence JSON reader
(`evidence_json`) is separate because its rows already carry every column.
"""

from __future__ import annotations

from meshcert.evidence.parsers.base import IngestProblem, ParsedFile, Row
from meshcert.evidence.parsers.detect import detect
from meshcert.evidence.parsers.registry import PARSERS, Parser, unrecognised_message

__all__ = ["PARSERS", "IngestProblem", "ParsedFile", "Parser", "Row", "detect",
           "unrecognised_message"]
