"""The canonical v2 `package_id` (package-v2.md, "Canonical package id"), byte-exact.

mesh-llm serializes its manifest struct with serde_json: compact, keys in struct field order,
absent optionals skipped, maps (proposers, strategies) sorted by name. This module rebuilds
those bytes from the parsed manifest dict, so a check can compare the declared id with the
recomputed one and the package writer can produce a valid id. Pure; never raises on odd input
(a value of the wrong shape is serialized as it is, so the id simply will not match).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

ROOT_ORDER = ("schema_version", "package_id", "model_id", "source_model", "format",
              "layer_count", "artifact_catalog", "sidecars", "generation",
              "native_abi_version", "generator_version", "created_at_unix_secs")
SOURCE_ORDER = ("sha256", "metadata_artifact_id", "repo", "revision", "primary_file",
                "canonical_ref", "distribution_id", "files")
ARTIFACT_ORDER = ("id", "path", "byte_size", "sha256")
FILE_ORDER = ("path", "byte_size", "sha256")
SIDECAR_ORDER = ("kind", "artifact_id", "name")
PROPOSER_ORDER = {
    "native-mtp": ("prediction_depth", "layer_indices"),
    "ngram-cache": ("ngram_min", "ngram_max", "max_proposal_tokens", "history_scope"),
    "ngram-suffix": ("ngram_min", "ngram_max", "max_proposal_tokens", "history_scope"),
}
STRATEGY_ORDER = {
    "native-mtp": ("proposer", "prediction_depth", "layer_indices", "window_policy"),
    "ngram-cache": ("proposer", "window_policy"),
    "ngram-suffix": ("proposer", "window_policy"),
    "composite": ("primary", "extender", "extension_policy", "window_policy"),
}
WINDOW_ORDER = ("default", "initial_window", "min_window", "max_window", "pipeline_depth")
EXTENSION_ORDER = ("max_tokens", "initial_tokens", "tail_backoff_proposals")
SPEC_ORDER = ("default", "proposers", "strategies")


def _ordered(obj: Any, order: tuple[str, ...]) -> Any:
    if not isinstance(obj, dict):
        return obj
    return {k: obj[k] for k in order if k in obj and obj[k] is not None}


def _sort_key(value: Any, key: str) -> str:
    item = value.get(key) if isinstance(value, dict) else None
    return item if isinstance(item, str) else ""


def _entry(obj: Any, orders: dict[str, tuple[str, ...]], strategy: bool) -> Any:
    if not isinstance(obj, dict):
        return obj
    kind = obj.get("type")
    order = orders.get(kind, ()) if isinstance(kind, str) else ()
    out: dict[str, Any] = {"type": kind} if "type" in obj else {}
    for key in order:
        value = obj.get(key)
        if value is None:
            continue
        if key == "layer_indices" and strategy and value == []:
            continue
        if key == "window_policy":
            value = _ordered(value, WINDOW_ORDER)
        elif key == "extension_policy":
            value = _ordered(value, EXTENSION_ORDER)
        out[key] = value
    return out


def _named_map(obj: Any, orders: dict[str, tuple[str, ...]], strategy: bool) -> Any:
    if not isinstance(obj, dict):
        return obj
    return {name: _entry(obj[name], orders, strategy) for name in sorted(obj)}


def _generation(gen: Any) -> Any:
    if not isinstance(gen, dict):
        return gen
    out: dict[str, Any] = {}
    spec = gen.get("speculative_decoding")
    if isinstance(spec, dict):
        canon: dict[str, Any] = {}
        for key in SPEC_ORDER:
            value = spec.get(key)
            if value is None:
                continue
            if key == "proposers":
                value = _named_map(value, PROPOSER_ORDER, strategy=False)
            elif key == "strategies":
                value = _named_map(value, STRATEGY_ORDER, strategy=True)
            if isinstance(value, dict) and not value and key != "default":
                continue  # empty maps are omitted
            canon[key] = value
        out["speculative_decoding"] = canon
    elif spec is not None:
        out["speculative_decoding"] = spec
    return out


def canonical_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as mesh-llm hashes it: id blanked, time zeroed, lists sorted, keys ordered."""
    out: dict[str, Any] = {}
    for key in ROOT_ORDER:
        value = manifest.get(key)
        if key == "package_id":
            value = ""
        elif key == "created_at_unix_secs":
            value = 0
        if value is None:
            continue
        if key == "source_model" and isinstance(value, dict):
            src = _ordered(value, SOURCE_ORDER)
            files = src.get("files")
            if isinstance(files, list):
                if files:
                    src["files"] = [_ordered(f, FILE_ORDER)
                                    for f in sorted(files, key=lambda f: _sort_key(f, "path"))]
                else:
                    del src["files"]
            value = src
        elif key == "artifact_catalog" and isinstance(value, dict):
            entries = value.get("entries")
            if isinstance(entries, list):
                entries = [_ordered(e, ARTIFACT_ORDER)
                           for e in sorted(entries, key=lambda e: _sort_key(e, "id"))]
            value = {"entries": entries} if "entries" in value else {}
        elif key == "sidecars" and isinstance(value, list):
            if not value:
                continue

            def sidecar_key(s: Any) -> tuple[str, int, str, str]:
                name = s.get("name") if isinstance(s, dict) else None
                return (_sort_key(s, "kind"), 0 if name is None else 1,
                        name if isinstance(name, str) else "", _sort_key(s, "artifact_id"))

            value = [_ordered(s, SIDECAR_ORDER) for s in sorted(value, key=sidecar_key)]
        elif key == "generation":
            value = _generation(value)
        out[key] = value
    return out


def canonical_bytes(manifest: dict[str, Any]) -> bytes:
    """Compact JSON, non-ASCII written as UTF-8 (as serde_json does)."""
    return json.dumps(canonical_manifest(manifest), separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def compute_package_id(manifest: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(manifest)).hexdigest()
