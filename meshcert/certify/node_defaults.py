"""What a mesh-llm node applies from a v2 package (mesh-llm-0.79.md §2.3 'Runtime use', §1.5):
the live KV-cache type and the request profiles. Pure, over the manifest dict.
"""

from __future__ import annotations

import math
from typing import Any

from meshcert.certify.formats.publisher import LIVE_KV_TYPES
from meshcert.certify.report import NodeDefaults, RequestProfile

SELECTION_ROLES = ("default", "reasoning_enabled", "reasoning_disabled")
RUNTIME_KV = "f16"
MAX_TEXT = 200
MAX_ITEMS = 32


def _declared_dtype(defaults: Any, slot: str) -> str | None:
    decl = defaults.get(slot) if isinstance(defaults, dict) else None
    dtype = decl.get("dtype") if isinstance(decl, dict) else None
    return dtype if isinstance(dtype, str) else None


def _shortened(value: Any, depth: int = 0) -> Any:
    """The value for the report: strings, lists and maps cut to a readable size."""
    if isinstance(value, str):
        return value if len(value) <= MAX_TEXT else value[:MAX_TEXT] + f"... ({len(value)} chars)"
    if depth > 3:
        return "..."
    if isinstance(value, list):
        items = [_shortened(v, depth + 1) for v in value[:MAX_ITEMS]]
        return items + ([f"... ({len(value)} items)"] if len(value) > MAX_ITEMS else [])
    if isinstance(value, dict):
        keys = list(value)[:MAX_ITEMS]
        out = {str(k)[:MAX_TEXT]: _shortened(value[k], depth + 1) for k in keys}
        if len(value) > MAX_ITEMS:
            out["..."] = f"({len(value)} keys)"
        return out
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # 1e400 parses as inf: never NaN/Infinity in report JSON
    return value


def request_profiles(manifest: dict[str, Any]) -> list[RequestProfile]:
    generation = manifest.get("generation")
    defaults = generation.get("request_defaults") if isinstance(generation, dict) else None
    if not isinstance(defaults, dict):
        return []
    profiles, selection = defaults.get("profiles"), defaults.get("selection")
    if not isinstance(profiles, dict):
        return []
    selection = selection if isinstance(selection, dict) else {}
    out: list[RequestProfile] = []
    for name in sorted(profiles, key=lambda n: n.encode("utf-8", "surrogatepass"))[:MAX_ITEMS]:
        body = profiles[name]
        fields = {k: _shortened(v) for k, v in body.items()} if isinstance(body, dict) else {}
        roles = [role for role in SELECTION_ROLES if selection.get(role) == name]
        out.append(RequestProfile(name=str(name)[:MAX_TEXT], selection=roles, fields=fields))
    return out


def node_defaults(manifest: dict[str, Any] | None) -> NodeDefaults | None:
    """None for v1 (or no manifest): v1 packages declare none of this."""
    if not isinstance(manifest, dict) or manifest.get("schema_version") != 2:
        return None
    defaults = manifest.get("publisher_defaults")
    kv, compute = (_declared_dtype(defaults, "kv_cache_dtype"),
                   _declared_dtype(defaults, "compute_dtype"))
    chosen, origin = ((kv, "kv_cache_dtype") if kv is not None
                      else (compute, "compute_dtype") if compute is not None
                      else (None, "runtime_default"))
    return NodeDefaults(
        kv_cache_type=chosen if chosen in LIVE_KV_TYPES else RUNTIME_KV,
        kv_cache_from=origin,  # type: ignore[arg-type]
        declared_kv_cache_dtype=kv, declared_compute_dtype=compute,
        request_profiles=request_profiles(manifest))
