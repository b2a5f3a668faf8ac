"""The canonical v2 `package_id` (package-v2.md, "Canonical package id"; mesh-llm-0.79.md §1.6),
byte-exact.

mesh-llm serializes its manifest struct with serde_json: compact, keys in struct field order,
absent optionals skipped, maps (proposers, strategies, profiles, logit_bias) sorted by name,
f64 fields in serde_json's float spelling whatever the JSON literal was. This module rebuilds
those bytes from the parsed manifest dict, so a check can compare the declared id with the
recomputed one and the package writer can produce a valid id. Pure; never raises on odd input
(a value of the wrong shape is serialized as it is, so the id simply will not match).
"""

from __future__ import annotations

import hashlib
import json
import math
from typing import Any

from meshcert.certify.formats.publisher import ROLE_RANK

ROOT_ORDER = ("schema_version", "package_id", "model_id", "source_model", "format",
              "layer_count", "artifact_catalog", "sidecars", "publisher_metadata",
              "publisher_defaults", "generation", "native_abi_version", "generator_version",
              "created_at_unix_secs")
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
PUBLISHER_METADATA_ORDER = ("role", "artifact_id", "source_repo", "source_revision",
                            "source_path")
PUBLISHER_DEFAULTS_ORDER = ("compute_dtype", "kv_cache_dtype")
DTYPE_DECLARATION_ORDER = ("dtype", "artifact_id", "json_path")
# generation.request_defaults (mesh-llm-0.79.md §1.5), declared before speculative_decoding
# in `Generation`; its f64 fields serialize as serde_json does
REQUEST_DEFAULTS_ORDER = ("selection", "profiles")
SELECTION_ORDER = ("default", "reasoning_enabled", "reasoning_disabled")
PROFILE_ORDER = (
    "max_tokens", "stop", "temperature", "top_p", "top_k", "min_p", "typical_p", "top_nsigma",
    "presence_penalty", "frequency_penalty", "seed", "logit_bias", "repeat_penalty",
    "repeat_last_n", "dynatemp_range", "dynatemp_exponent", "dry", "xtc", "mirostat_mode",
    "mirostat_entropy", "mirostat_learning_rate", "samplers", "sampler_sequence", "ignore_eos",
    "reasoning", "provenance")
PROFILE_FLOATS = frozenset({
    "temperature", "top_p", "min_p", "typical_p", "top_nsigma", "presence_penalty",
    "frequency_penalty", "repeat_penalty", "dynatemp_range", "dynatemp_exponent",
    "mirostat_entropy", "mirostat_learning_rate"})
DRY_ORDER = ("multiplier", "base", "allowed_length", "penalty_last_n", "sequence_breakers")
DRY_FLOATS = frozenset({"multiplier", "base"})
XTC_ORDER = ("probability", "threshold")
REASONING_ORDER = ("enabled", "format", "budget")
PROVENANCE_ORDER = ("source_repo", "revision", "file", "section", "url")


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


class F64(float):
    """A value serde_json holds as an f64: written as serde_json writes it (1 -> 1.0)."""


def _f64(value: Any) -> Any:
    """A number in an f64 field as serde_json holds it (an integer literal becomes a float;
    one beyond f64's range, which serde_json refuses at parse, is left as it is)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return value
    try:
        return F64(value)
    except OverflowError:
        return value


def _floats(obj: Any, order: tuple[str, ...], floats: frozenset[str]) -> Any:
    out = _ordered(obj, order)
    if isinstance(out, dict):
        out = {k: _f64(v) if k in floats else v for k, v in out.items()}
    return out


def _profile(obj: Any) -> Any:
    out = _floats(obj, PROFILE_ORDER, PROFILE_FLOATS)
    if not isinstance(out, dict):
        return out
    if isinstance(out.get("logit_bias"), dict):
        bias = out["logit_bias"]
        out["logit_bias"] = {k: _f64(bias[k]) for k in sorted(bias)}
    for key, order, floats in (("dry", DRY_ORDER, DRY_FLOATS),
                               ("xtc", XTC_ORDER, frozenset(XTC_ORDER)),
                               ("reasoning", REASONING_ORDER, frozenset()),
                               ("provenance", PROVENANCE_ORDER, frozenset())):
        if key in out:
            out[key] = _floats(out[key], order, floats)
    return out


def _request_defaults(obj: Any) -> Any:
    out = _ordered(obj, REQUEST_DEFAULTS_ORDER)
    if not isinstance(out, dict):
        return out
    if "selection" in out:
        out["selection"] = _ordered(out["selection"], SELECTION_ORDER)
    profiles = out.get("profiles")
    if isinstance(profiles, dict):
        out["profiles"] = {name: _profile(profiles[name]) for name in sorted(profiles)}
    return out


def _generation(gen: Any) -> Any:
    if not isinstance(gen, dict):
        return gen
    out: dict[str, Any] = {}
    if gen.get("request_defaults") is not None:
        out["request_defaults"] = _request_defaults(gen["request_defaults"])
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


def _publisher_metadata_key(entry: Any) -> tuple[int, str, str, str, str]:
    """The derived Ord of mesh-llm's PublisherMetadata: role by its enum's declaration order,
    then the strings by byte order (code point order, which UTF-8 keeps)."""
    role = entry.get("role") if isinstance(entry, dict) else None
    rank = ROLE_RANK.get(role, len(ROLE_RANK)) if isinstance(role, str) else len(ROLE_RANK)
    return (rank, _sort_key(entry, "artifact_id"), _sort_key(entry, "source_repo"),
            _sort_key(entry, "source_revision"), _sort_key(entry, "source_path"))


def _publisher_defaults(obj: Any) -> Any:
    out = _ordered(obj, PUBLISHER_DEFAULTS_ORDER)  # {} stays {}: the skip rule is "absent"
    if isinstance(out, dict):
        out = {k: _ordered(v, DTYPE_DECLARATION_ORDER) for k, v in out.items()}
    return out


def canonical_manifest(manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest as mesh-llm hashes it: id blanked, time zeroed, lists sorted, keys ordered
    (publisher_metadata by its derived Ord; the manifest itself keeps the writer's order)."""
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
        elif key == "publisher_metadata" and isinstance(value, list):
            if not value:
                continue
            value = [_ordered(e, PUBLISHER_METADATA_ORDER)
                     for e in sorted(value, key=_publisher_metadata_key)]
        elif key == "publisher_defaults":
            value = _publisher_defaults(value)
        elif key == "generation":
            value = _generation(value)
        out[key] = value
    return out


def canonical_bytes(manifest: dict[str, Any]) -> bytes:
    """Compact JSON, non-ASCII written as UTF-8 (as serde_json does). A lone surrogate (which
    Python's json reads and serde_json refuses) is kept as its bytes, so nothing raises."""
    return _dump(canonical_manifest(manifest)).encode("utf-8", "surrogatepass")


def compute_package_id(manifest: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(canonical_bytes(manifest)).hexdigest()


def _dump(value: Any) -> str:
    """Compact JSON as serde_json writes it: F64 values in its float spelling."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_dump(str(k))}:{_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    if isinstance(value, F64):
        return serde_f64(value)
    return json.dumps(value, ensure_ascii=False)


def serde_f64(value: float) -> str:
    """An f64 the way serde_json writes it (ryu's shortest digits, its fixed/scientific
    choice: fixed for 1e-5 <= |x| < 1e16, an integral value with `.0`; otherwise an exponent
    without `+` or zero padding: `1e-6`, `1.5e-7`, `1e16`). serde_json writes a non-finite
    f64 as `null` (it cannot be parsed from JSON in the first place)."""
    if not math.isfinite(value):
        return "null"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    sign = "-" if value < 0 else ""
    mantissa, _, exp = repr(abs(value)).partition("e")  # repr: the shortest round-trip digits
    whole, _, frac = mantissa.partition(".")
    raw = whole + frac
    digits = raw.lstrip("0")
    kk = len(whole) + int(exp or 0) - (len(raw) - len(digits))  # 10^(kk-1) <= |x| < 10^kk
    digits = digits.rstrip("0")
    length, k = len(digits), kk - len(digits)
    if k >= 0 and kk <= 16:
        text = digits + "0" * k + ".0"
    elif 0 < kk <= 16:
        text = f"{digits[:kk]}.{digits[kk:]}"
    elif -5 < kk <= 0:
        text = "0." + "0" * -kk + digits
    elif length == 1:
        text = f"{digits}e{kk - 1}"
    else:
        text = f"{digits[0]}.{digits[1:]}e{kk - 1}"
    return sign + text
