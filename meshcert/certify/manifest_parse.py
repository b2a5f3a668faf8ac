"""Strict parsing of model-package.json bytes into a dict plus parse findings (pure)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from meshcert.core.errors import MeshcertError
from meshcert.core.findings import Finding, finding

MANIFEST_NAME = "model-package.json"
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64


@dataclass
class ParsedManifest:
    data: dict[str, Any] | None
    findings: list[Finding] = field(default_factory=list)


class _DuplicateKey(MeshcertError):
    pass


def reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def bracket_depth(text: str) -> int:
    """Cheap pre-scan so json never recurses past Python's stack on hostile nesting."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_manifest(raw: bytes | None) -> ParsedManifest:
    """Parse strictly, collecting every duplicate key; never raises."""
    if raw is None:
        return ParsedManifest(None, [finding("missing_manifest", f"{MANIFEST_NAME} not found at "
                                             "the package root", path=MANIFEST_NAME)])
    if len(raw) > MAX_MANIFEST_BYTES:
        return ParsedManifest(None, [finding(
            "manifest_too_large",
            f"{MANIFEST_NAME} is {len(raw)} bytes, over the 16 MiB limit for peer transfer",
            path=MANIFEST_NAME)])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ParsedManifest(None, [finding(
            "invalid_manifest_json", f"{MANIFEST_NAME} is not UTF-8 (byte {exc.start})",
            path=MANIFEST_NAME)])
    if text.startswith("\ufeff"):
        text = text[1:]
    if bracket_depth(text) > MAX_DEPTH:
        return ParsedManifest(None, [finding(
            "invalid_manifest_json", f"{MANIFEST_NAME} nests deeper than {MAX_DEPTH} levels",
            path=MANIFEST_NAME)])
    duplicates: list[Finding] = []

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in pairs:
            if key in out:
                duplicates.append(finding(
                    "duplicate_manifest_key",
                    f"key {key!r} appears more than once in one object; the last value was kept",
                    path=MANIFEST_NAME))
            out[key] = value
        return out

    try:
        data = json.loads(text, object_pairs_hook=pairs_hook, parse_constant=reject_constant)
    except (ValueError, RecursionError) as exc:
        return ParsedManifest(None, [finding(
            "invalid_manifest_json", f"{MANIFEST_NAME} is not valid JSON: {exc}",
            path=MANIFEST_NAME)])
    if not isinstance(data, dict):
        return ParsedManifest(None, [finding(
            "invalid_manifest_json",
            f"{MANIFEST_NAME} must hold a JSON object, found {type(data).__name__}",
            path=MANIFEST_NAME)])
    return ParsedManifest(data, duplicates)
