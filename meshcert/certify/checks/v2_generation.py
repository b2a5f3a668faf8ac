"""Package v2 `generation` (package-v2.md; mesh-llm-0.79.md §1.4): `{request_defaults?,
speculative_decoding?}`, both optional (`{}` is valid). `request_defaults` is read and
validated as mesh-llm does (meshcert/certify/checks/v2_request_defaults.py). `speculative_decoding`
is a strictly typed grammar (entries tagged by `type`, unknown types and fields rejected), then the
runtime value rules v1 also has (depth 1, windows, history scope, n-gram bounds, MTP layers in range
and holding `nextn` tensors). The value rules are shared with the v1 checks; in v2 they carry the v2
code `invalid_generation_value` (layer ranges: `layer_out_of_bounds`). A package with `.nextn.`
tensors but no `speculative_decoding` is valid; mesh-llm's runtime warns that native MTP stays off,
and so does this check.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from meshcert.certify.checks import register
from meshcert.certify.checks.speculative import (
    _extension_policy,
    _native_mtp_fields,
    _ngram_fields,
    window_policy,
)
from meshcert.certify.checks.v2_manifest import unknown_keys
from meshcert.certify.checks.v2_publisher import findings_of
from meshcert.certify.checks.v2_request_defaults import request_defaults_problems
from meshcert.certify.manifest_model import is_int
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.package_gguf.fragments import capped, preview
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.names import layer_of

SPEC = "generation.speculative_decoding"
NGRAM = frozenset({"ngram-cache", "ngram-suffix"})
NGRAM_FIELDS = ("ngram_min", "ngram_max", "max_proposal_tokens", "history_scope")
PROPOSER_FIELDS: dict[str, frozenset[str]] = {
    "native-mtp": frozenset({"type", "prediction_depth", "layer_indices"}),
    "ngram-cache": frozenset({"type", *NGRAM_FIELDS}),
    "ngram-suffix": frozenset({"type", *NGRAM_FIELDS}),
}
STRATEGY_FIELDS: dict[str, frozenset[str]] = {
    "native-mtp": frozenset({"type", "proposer", "prediction_depth", "layer_indices",
                             "window_policy"}),
    "ngram-cache": frozenset({"type", "proposer", "window_policy"}),
    "ngram-suffix": frozenset({"type", "proposer", "window_policy"}),
    "composite": frozenset({"type", "primary", "extender", "extension_policy",
                            "window_policy"}),
}
V1_GENERATION_KEYS = frozenset({"policy", "thresholds"})
GENERATION_KEYS = frozenset({"request_defaults", "speculative_decoding"})


def _f(code: str, message: str) -> Finding:
    return finding(code, message, path=MANIFEST_NAME)


def _as_v2(findings: Iterable[Finding]) -> Iterator[Finding]:
    """A shared value rule's finding under its v2 code, message kept."""
    for item in findings:
        code = ("layer_out_of_bounds" if item.code == "native_mtp_layer_out_of_range"
                else "unknown_manifest_field" if item.code == "unknown_manifest_field"
                else "invalid_generation_value")
        yield finding(code, item.message, path=MANIFEST_NAME,
                      severity="error" if code == "unknown_manifest_field" else None)


def _mtp_layers(view: PackageView) -> dict[int, bool] | None:
    """layer ordinal -> whether the tensor catalog has `blk.N.nextn.*` tensors for it."""
    tensor_catalog = view.tensor_catalog()
    if tensor_catalog is None or not tensor_catalog.usable:
        return None
    out: dict[int, bool] = {}
    for t in tensor_catalog.tensors:
        layer = layer_of(t.name)
        if layer is not None:
            out[layer] = out.get(layer, False) or ".nextn." in t.name
    return out


@register("v2_generation", order=50, codes=[
    "v1_field_in_v2_manifest", "unreleased_manifest_extension", "unknown_manifest_field",
    "unknown_strategy", "unknown_proposer", "invalid_generation_value", "layer_out_of_bounds",
    "native_mtp_layer_missing_tensors", "missing_value", "invalid_identifier",
    "mtp_without_speculative_decoding",
], formats=["v2"])
def v2_generation(view: PackageView) -> Iterator[Finding]:
    m = view.manifest
    if view.package_format != "v2" or m is None:
        return
    gen = m.get("generation")
    if gen is None:  # an Option: absent or null
        yield from _mtp_without_declaration(view)
        return
    if not isinstance(gen, dict):
        yield _f("invalid_generation_value", "generation must be an object")
        return
    for key in sorted(set(gen) - GENERATION_KEYS):
        if key in V1_GENERATION_KEYS:
            yield _f("v1_field_in_v2_manifest", f"generation.{key} is v1-only; v2 rejects it")
        else:
            yield from unknown_keys("generation.", {key: None}, frozenset())
    if gen.get("request_defaults") is not None:
        yield from capped(list(findings_of(request_defaults_problems(gen["request_defaults"]))),
                          limit=50)
    spec = gen.get("speculative_decoding")
    if spec is None:
        yield from _mtp_without_declaration(view)
        return
    if not isinstance(spec, dict):
        yield _f("invalid_generation_value", f"{SPEC} must be an object")
        return
    yield from unknown_keys(f"{SPEC}.", spec, frozenset({"default", "proposers", "strategies"}))
    layers = m.get("layer_count") if is_int(m.get("layer_count")) else None
    for key in ("proposers", "strategies"):
        if key in spec and not isinstance(spec[key], dict):
            # a defaulted map: absent is empty, a null is a parse error (mesh-llm-0.79.md §1.1)
            yield _f("invalid_generation_value", f"{SPEC}.{key} must be an object (name -> "
                     f"entry), found {spec[key]!r}")
    proposers = _map(spec, "proposers")
    strategies = _map(spec, "strategies")
    for name, raw in (proposers or {}).items():
        yield from _proposer(f"{SPEC}.proposers.{name}", raw, layers)
    for name, raw in (strategies or {}).items():
        yield from _strategy(f"{SPEC}.strategies.{name}", raw, proposers or {}, layers)
    default = spec.get("default")
    if not isinstance(default, str) or not default.strip():
        yield _f("unknown_strategy", f"{SPEC}.default is {default!r}; it must name a strategy")
    elif default not in (strategies or {}):
        yield _f("unknown_strategy", f"{SPEC}.default {default!r} is not a declared strategy")
    yield from _nextn_tensors(view, proposers or {}, strategies or {})


def _mtp_without_declaration(view: PackageView) -> Iterator[Finding]:
    """`.nextn.` tensors but no speculative_decoding (e.g. written with mesh-llm's
    --generation-defaults, which drops the inferred declaration): mesh-llm's runtime warns
    that native MTP will not be enabled."""
    have = _mtp_layers(view)
    layers = sorted(layer for layer, nextn in (have or {}).items() if nextn)
    if layers:
        yield finding("mtp_without_speculative_decoding", f"the tensor catalog has "
                      f"blk.N.nextn.* (MTP) tensors in layer(s) {preview([str(n) for n in layers])}"
                      f" but the manifest has no {SPEC}: native MTP will not be enabled",
                      path=MANIFEST_NAME)


def _map(spec: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = spec.get(key)
    return value if isinstance(value, dict) else None


def _typed(where: str, raw: Any, fields: dict[str, frozenset[str]]) -> Iterator[Finding]:
    if not isinstance(raw, dict):
        yield _f("invalid_generation_value", f"{where} must be an object")
        return
    kind = raw.get("type")
    if kind not in fields:
        yield _f("invalid_generation_value", f"{where}.type {kind!r} is not one of "
                 f"{', '.join(sorted(fields))}")
        return
    for key in sorted(set(raw) - fields[kind]):
        yield _f("invalid_generation_value", f"{where}.{key} is not a field of a {kind} entry")


def _proposer(where: str, raw: Any, layers: int | None) -> Iterator[Finding]:
    problems = list(_typed(where, raw, PROPOSER_FIELDS))
    yield from problems
    if problems:
        return
    if raw["type"] == "native-mtp":
        yield from _as_v2(_native_mtp_fields(where, raw, layers))
    else:
        yield from _as_v2(_ngram_fields(where, raw["type"], raw))


def _strategy(where: str, raw: Any, proposers: dict[str, Any], layers: int | None
              ) -> Iterator[Finding]:
    problems = list(_typed(where, raw, STRATEGY_FIELDS))
    yield from problems
    if problems:
        return
    kind = raw["type"]
    if "window_policy" in raw:
        yield from _as_v2(window_policy(f"{where}.window_policy", raw["window_policy"]))
    if kind == "native-mtp":
        inline = "prediction_depth" in raw or "layer_indices" in raw
        if ("proposer" in raw) == inline:
            yield _f("invalid_generation_value", f"{where}: a native-mtp strategy has EITHER "
                     "proposer OR inline prediction_depth + layer_indices (not both, not neither)")
        elif inline:
            yield from _as_v2(_native_mtp_fields(where, raw, layers))
        else:
            yield from _reference(where, "proposer", raw, proposers, {"native-mtp"})
    elif kind in NGRAM:
        yield from _reference(where, "proposer", raw, proposers, {kind})
    else:
        yield from _reference(where, "primary", raw, proposers, {"native-mtp"})
        yield from _reference(where, "extender", raw, proposers, set(NGRAM))
        if "extension_policy" not in raw:
            yield _f("invalid_generation_value", f"{where}.extension_policy is required")
        else:
            yield from _as_v2(_extension_policy(f"{where}.extension_policy",
                                                raw["extension_policy"]))


def _reference(where: str, key: str, raw: dict[str, Any], proposers: dict[str, Any],
               kinds: set[str]) -> Iterator[Finding]:
    name = raw.get(key)
    if not isinstance(name, str) or name not in proposers:
        yield _f("unknown_proposer", f"{where}.{key} {name!r} is not a declared proposer")
        return
    target = proposers[name]
    kind = target.get("type") if isinstance(target, dict) else None
    if kind not in kinds:
        yield _f("invalid_generation_value", f"{where}.{key} names {name!r}, a {kind!r} proposer;"
                 f" it must be {' or '.join(sorted(kinds))}")


def _nextn_tensors(view: PackageView, proposers: dict[str, Any], strategies: dict[str, Any]
                   ) -> Iterator[Finding]:
    have = _mtp_layers(view)
    if have is None:
        return
    named: dict[int, str] = {}
    for group, where in ((proposers, "proposers"), (strategies, "strategies")):
        for name, raw in group.items():
            if isinstance(raw, dict) and raw.get("type") == "native-mtp" \
                    and isinstance(raw.get("layer_indices"), list):
                for index in raw["layer_indices"]:
                    if is_int(index):
                        named.setdefault(index, f"{SPEC}.{where}.{name}")
    for index, where in sorted(named.items()):
        if not have.get(index, False):
            yield finding("native_mtp_layer_missing_tensors", f"{where} names layer {index}, "
                          f"but the tensor catalog has no blk.{index}.nextn.* tensors",
                          path=MANIFEST_NAME, layer_index=index)
