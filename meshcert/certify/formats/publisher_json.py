"""Strict, bounded reading of a publisher JSON file (metadata/config.json, ...): UTF-8, strict
JSON (no NaN/Infinity), nesting at most MAX_DEPTH, a JSON object at the top. Pure; never
raises: a file that fails says why, with a finding code of its own.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from meshcert.certify.manifest_parse import bracket_depth, reject_constant

MAX_DEPTH = 64

NOT_UTF8 = "publisher_file_not_utf8"
INVALID_JSON = "publisher_file_invalid_json"
TOO_DEEP = "publisher_file_too_deep"
NOT_OBJECT = "publisher_file_not_object"
TOO_LARGE = "publisher_file_too_large"
CODES = (NOT_UTF8, INVALID_JSON, TOO_DEEP, NOT_OBJECT, TOO_LARGE)


@dataclass(frozen=True)
class JsonProblem:
    code: str
    message: str


def decode_text(data: bytes) -> str | JsonProblem:
    """The file's text (a leading BOM dropped), or why it is not UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return JsonProblem(NOT_UTF8, f"is not UTF-8 (byte {exc.start})")
    return text[1:] if text.startswith("\ufeff") else text


def parse_publisher_json(data: bytes) -> dict[str, Any] | JsonProblem:
    """The file's JSON object, or the problem that stops it being one."""
    text = decode_text(data)
    if isinstance(text, JsonProblem):
        return text
    if bracket_depth(text) > MAX_DEPTH:  # before json, which would recurse that deep
        return JsonProblem(TOO_DEEP, f"nests deeper than {MAX_DEPTH} levels")
    try:
        value = json.loads(text, parse_constant=reject_constant)
    except (ValueError, RecursionError) as exc:
        return JsonProblem(INVALID_JSON, f"is not valid JSON: {str(exc)[:200]}")
    if not isinstance(value, dict):
        return JsonProblem(NOT_OBJECT, f"must hold a JSON object, found a JSON "
                           f"{_json_kind(value)}")
    return value


def _json_kind(value: object) -> str:
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "boolean"
    if value is None:
        return "null"
    return "number"
