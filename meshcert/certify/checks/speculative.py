"""Speculative decoding defaults (package.md, `generation.speculative_decoding`).

Codes and rules follow mesh-llm's package tool (preflight). Where package.md and that tool
disagree (`ngram-simple`, `draft-model`, inline n-gram fields), the package tool's verdict is
reported and a `speculative_spec_disagreement` warning says why. `native_mtp_layer_missing_tensors`
needs GGUF tensors and lives with the tensor checks.

Every message names the JSON location, e.g. `generation.speculative_decoding.strategies.mtp`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, applicable, register
from meshcert.certify.checks.generation import json_path, names_backend, shown, type_name
from meshcert.certify.manifest_model import generation, is_int, layer_count
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding

SPEC = "generation.speculative_decoding"
NATIVE_MTP = "native-mtp"
COMPOSITE = "composite"
NGRAM_TYPES = frozenset({"ngram-cache", "ngram-suffix"})
PROPOSER_TYPES = frozenset({NATIVE_MTP, *NGRAM_TYPES})
STRATEGY_TYPES = frozenset({*PROPOSER_TYPES, COMPOSITE})
SPEC_ONLY_PROPOSER_TYPE = "ngram-simple"  # listed by package.md, rejected by the package tool
DRAFT_MODEL = "draft-model"  # may be ignored unless it is the declared default
STABLE_IDS = ("mtp", "ngram-cache", "ngram-suffix", "mtp-cache", "mtp-suffix")
LEGACY_IDS = {"native-mtp-n1": "mtp"}
OPERATOR_ONLY_IDS = frozenset({"disabled"})
REQUEST_SCOPE = "request"
NGRAM_CACHE_MAX = 4
NGRAM_SUFFIX_MIN, NGRAM_SUFFIX_MAX = 3, 64
MAX_PIPELINE_DEPTH = 64

NGRAM_FIELDS = frozenset({"ngram_min", "ngram_max", "max_proposal_tokens", "history_scope"})
PROPOSER_KEYS = frozenset({"type", "prediction_depth", "layer_indices", *NGRAM_FIELDS})
STRATEGY_KEYS = frozenset({*PROPOSER_KEYS, "proposer", "primary", "extender",
                           "extension_policy", "window_policy"})
SPEC_KEYS = frozenset({"default", "proposers", "strategies", "window_policy"})
WINDOW_KEYS = frozenset({"default", "min_window", "initial_window", "max_window",
                         "pipeline_depth"})
WINDOW_SIZES = ("min_window", "initial_window", "max_window")
EXTENSION_KEYS = frozenset({"max_tokens", "initial_tokens", "tail_backoff_proposals"})


def _f(code: str, message: str) -> Finding:
    return finding(code, message, path=MANIFEST_NAME)


@dataclass(frozen=True)
class Speculative:
    """The dict-shaped parts of `speculative_decoding`, read tolerantly."""

    raw: dict[str, Any]
    proposers: dict[str, Any]
    strategies: dict[str, Any]
    layer_count: int | None

    def proposer(self, ref: Any) -> dict[str, Any] | None:
        """The declared proposer object a reference names, if there is one."""
        value = self.proposers.get(ref) if isinstance(ref, str) else None
        return value if isinstance(value, dict) else None

    def default_strategy_id(self) -> str | None:
        """The declared strategy the default names (a legacy id resolves to its stable id)."""
        default = self.raw.get("default")
        if not isinstance(default, str):
            return None
        if default in self.strategies:
            return default
        alias = LEGACY_IDS.get(default)
        return alias if alias in self.strategies else None


NO_SPECULATIVE = "the manifest declares no generation.speculative_decoding object"


def read_speculative(view: PackageView) -> Speculative | None:
    """`generation.speculative_decoding` when it is an object, else None."""
    gen = generation(view.manifest) if view.manifest is not None else None
    raw = gen.get("speculative_decoding") if gen is not None else None
    if not isinstance(raw, dict):
        return None
    proposers, strategies = raw.get("proposers"), raw.get("strategies")
    return Speculative(raw, proposers if isinstance(proposers, dict) else {},
                       strategies if isinstance(strategies, dict) else {},
                       layer_count(view.manifest) if view.manifest is not None else None)


def _unknown_keys(where: str, obj: dict[str, Any], known: frozenset[str]) -> Iterator[Finding]:
    """Unknown field names are info (schema 1 is additive); backend names are reported by the
    generation_fields check instead."""
    for key in obj:
        if key not in known and not names_backend(str(key)):
            yield _f("unknown_manifest_field", f"unknown field {json_path(where, key)} (ignored)")


def _is(value: Any, allowed: frozenset[str]) -> bool:
    """Membership that tolerates unhashable JSON values (lists, objects)."""
    return isinstance(value, str) and value in allowed


def _names(mapping: dict[str, Any], limit: int = 10) -> str:
    """The declared ids of a map, for a message (the first few)."""
    names = sorted(map(shown, mapping))
    more = f", ... ({len(names)} in all)" if len(names) > limit else ""
    return (", ".join(names[:limit]) + more) if names else "none"


def _describe(value: Any) -> str:
    """A JSON value for a message: 'x' for strings, 2 for numbers, `array [...]` for the rest."""
    if value is None:
        return "missing"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return shown(value)
    return f"{type_name(value)} {shown(value)}"


# --- speculative_decoding: shape, default, top-level window policy ---------------------------
@register("speculative_decoding", order=50, codes=[
    "invalid_manifest_field", "unknown_manifest_field", "empty_speculative_default",
    "missing_speculative_default_strategy", "legacy_speculative_strategy_id",
    "operator_only_speculative_strategy", "empty_window_policy_default",
    "invalid_window_policy_zero", "invalid_window_policy_pipeline_depth",
    "invalid_window_policy_bounds", "invalid_window_policy_initial",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: (generation(view.manifest or {}) or {}).get("speculative_decoding") is not None,
    NO_SPECULATIVE)])
def speculative_decoding(view: PackageView) -> Iterator[Finding]:
    gen = generation(view.manifest) if view.manifest is not None else None
    raw = gen.get("speculative_decoding") if gen is not None else None
    if raw is None:
        return
    if not isinstance(raw, dict):
        yield _f("invalid_manifest_field", f"{SPEC} must be an object, found {type_name(raw)}")
        return
    spec = read_speculative(view)
    assert spec is not None  # raw is a dict
    for key in ("proposers", "strategies"):
        if raw.get(key) is not None and not isinstance(raw[key], dict):
            yield _f("invalid_manifest_field", f"{SPEC}.{key} must be an object mapping ids to "
                     f"definitions, found {type_name(raw[key])}")
    yield from _unknown_keys(SPEC, raw, SPEC_KEYS)
    yield from _default(spec)
    if raw.get("window_policy") is not None:
        yield from window_policy(f"{SPEC}.window_policy", raw["window_policy"])


def _default(spec: Speculative) -> Iterator[Finding]:
    default = spec.raw.get("default")
    where = f"{SPEC}.default"
    if not isinstance(default, str) or not default.strip():
        said = "blank" if isinstance(default, str) else _describe(default)
        yield _f("empty_speculative_default",
                 f"{where} is {said}; it must name a declared strategy")
        return
    yield from _strategy_id(where, default)
    if spec.default_strategy_id() is None:
        declared = _names(spec.strategies)
        yield _f("missing_speculative_default_strategy",
                 f"{where} is {shown(default)}, which is not a declared strategy "
                 f"(declared: {declared})")


def _strategy_id(where: str, strategy_id: str) -> Iterator[Finding]:
    """Stable ids only: the legacy id and operator-only choices are warnings."""
    if strategy_id in LEGACY_IDS:
        yield _f("legacy_speculative_strategy_id",
                 f"{where} uses the legacy id {strategy_id!r}, which means "
                 f"{LEGACY_IDS[strategy_id]!r}; use the stable id (mesh-llm's package tool "
                 "matches ids literally)")
    elif strategy_id in OPERATOR_ONLY_IDS:
        yield _f("operator_only_speculative_strategy",
                 f"{where} uses {strategy_id!r}, which is an operator choice, never a package "
                 f"strategy (stable ids: {', '.join(STABLE_IDS)})")


# --- window and extension policies ------------------------------------------------------------
def window_policy(where: str, window: Any) -> Iterator[Finding]:
    """default non-empty; min <= initial <= max, none zero; pipeline_depth in 1..64."""
    if not isinstance(window, dict):
        yield _f("invalid_manifest_field", f"{where} must be an object, found {type_name(window)}")
        return
    yield from _unknown_keys(where, window, WINDOW_KEYS)
    default = window.get("default")
    if not isinstance(default, str) or not default.strip():
        said = "blank" if isinstance(default, str) else _describe(default)
        yield _f("empty_window_policy_default",
                 f"{where}.default is {said}; set it (e.g. fixed or adaptive)")
    sizes: dict[str, int] = {}
    for name in WINDOW_SIZES:
        value = window.get(name)
        if is_int(value) and value > 0:
            sizes[name] = value
        else:
            yield _f("invalid_window_policy_zero",
                     f"{where}.{name} is {_describe(value)}; window sizes are integers > 0")
    yield from _window_bounds(where, sizes)
    depth = window.get("pipeline_depth")
    if depth is not None and not (is_int(depth) and 1 <= depth <= MAX_PIPELINE_DEPTH):
        yield _f("invalid_window_policy_pipeline_depth",
                 f"{where}.pipeline_depth is {_describe(depth)}; it must be an integer in "
                 f"1..{MAX_PIPELINE_DEPTH} (omitted means 1)")


def _window_bounds(where: str, sizes: dict[str, int]) -> Iterator[Finding]:
    low, first, high = (sizes.get(name) for name in WINDOW_SIZES)
    if low is not None and high is not None and low > high:
        yield _f("invalid_window_policy_bounds",
                 f"{where}: min_window {low} exceeds max_window {high}")
    if first is None:
        return
    if (low is not None and first < low) or (high is not None and first > high):
        yield _f("invalid_window_policy_initial",
                 f"{where}.initial_window {first} is outside min_window..max_window "
                 f"({low}..{high})")


def _extension_policy(where: str, policy: Any) -> Iterator[Finding]:
    """max_tokens > 0; when present, 0 < initial_tokens <= max_tokens and
    tail_backoff_proposals > 0 (package.md; mesh-llm rejects a zero or an initial_tokens above
    max_tokens)."""
    if not isinstance(policy, dict):
        yield _f("invalid_extension_policy_tokens",
                 f"{where} must be an object with max_tokens > 0, found {type_name(policy)}")
        return
    yield from _unknown_keys(where, policy, EXTENSION_KEYS)
    max_tokens = policy.get("max_tokens")
    max_ok = is_int(max_tokens) and max_tokens > 0
    if not max_ok:
        yield _f("invalid_extension_policy_tokens",
                 f"{where}.max_tokens is {_describe(max_tokens)}; it must be an integer > 0")
    for name in ("initial_tokens", "tail_backoff_proposals"):
        value = policy.get(name)
        if value is not None and not (is_int(value) and value > 0):
            yield _f("invalid_extension_policy_tokens",
                     f"{where}.{name} is {_describe(value)}; it must be an integer > 0")
    initial = policy.get("initial_tokens")
    if max_ok and is_int(initial) and is_int(max_tokens) and initial > max_tokens:
        yield _f("invalid_extension_policy_tokens",
                 f"{where}.initial_tokens {initial} is above max_tokens {max_tokens}")


# --- proposer fields (shared by proposers and inline strategies) ------------------------------
def _native_mtp_fields(where: str, fields: dict[str, Any], layers: int | None
                       ) -> Iterator[Finding]:
    depth = fields.get("prediction_depth")
    if not (is_int(depth) and depth == 1):
        yield _f("unsupported_native_mtp_prediction_depth",
                 f"{where}.prediction_depth is {_describe(depth)}; native MTP supports only 1")
    indices = fields.get("layer_indices")
    if not isinstance(indices, list) or not indices:
        yield _f("missing_native_mtp_layers",
                 f"{where}.layer_indices is {_describe(indices)}; it must list the MTP layers")
        return
    for i, index in enumerate(indices):
        if not is_int(index) or index < 0:
            yield _f("native_mtp_layer_out_of_range",
                     f"{where}.layer_indices[{i}] is {_describe(index)}, not a layer index")
        elif layers is not None and index >= layers:
            yield _f("native_mtp_layer_out_of_range",
                     f"{where}.layer_indices[{i}] is {index}, but layer_count is {layers}")


def _count(value: Any) -> int:
    """An n-gram size as mesh-llm reads it: missing (or unreadable) counts as 0."""
    return value if is_int(value) else 0


def _ngram_fields(where: str, kind: str, fields: dict[str, Any]) -> Iterator[Finding]:
    """ngram-cache: 1 <= min <= max <= 4; ngram-suffix: 3 <= min <= max <= 64; both need
    max_proposal_tokens > 0 and history_scope "request"."""
    low, high = _count(fields.get("ngram_min")), _count(fields.get("ngram_max"))
    window = (f"{where}.ngram_min {_describe(fields.get('ngram_min'))}, "
             f"ngram_max {_describe(fields.get('ngram_max'))}")
    if low < 1 or high < 1 or low > high:
        yield _f("invalid_ngram_proposer_window", f"{window}: need 1 <= ngram_min <= ngram_max")
    tokens = fields.get("max_proposal_tokens")
    if not (is_int(tokens) and tokens > 0):
        yield _f("invalid_ngram_proposer_max_tokens",
                 f"{where}.max_proposal_tokens is {_describe(tokens)}; it must be > 0")
    if kind == "ngram-cache" and high > NGRAM_CACHE_MAX:
        yield _f("unsupported_ngram_cache_max_window",
                 f"{where}.ngram_max is {high}; ngram-cache supports at most {NGRAM_CACHE_MAX}")
    if kind == "ngram-suffix" and (low < NGRAM_SUFFIX_MIN or high > NGRAM_SUFFIX_MAX):
        yield _f("unsupported_ngram_suffix_window",
                 f"{window}: ngram-suffix needs {NGRAM_SUFFIX_MIN} <= ngram_min <= ngram_max <= "
                 f"{NGRAM_SUFFIX_MAX}")
    scope = fields.get("history_scope")
    if scope != REQUEST_SCOPE:
        code = ("invalid_ngram_cache_history_scope" if kind == "ngram-cache"
                else "invalid_ngram_suffix_history_scope")
        yield _f(code, f"{where}.history_scope is {_describe(scope)}; {kind} needs "
                 f"{REQUEST_SCOPE!r} (history is request-local)")


# --- speculative_proposers --------------------------------------------------------------------
@register("speculative_proposers", order=51, codes=[
    "invalid_manifest_field", "unknown_manifest_field", "empty_speculative_proposer_name",
    "unsupported_speculative_proposer_type", "speculative_spec_disagreement",
    "unsupported_native_mtp_prediction_depth", "missing_native_mtp_layers",
    "native_mtp_layer_out_of_range", "invalid_ngram_proposer_window",
    "invalid_ngram_proposer_max_tokens", "unsupported_ngram_cache_max_window",
    "invalid_ngram_cache_history_scope", "invalid_ngram_suffix_history_scope",
    "unsupported_ngram_suffix_window",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: read_speculative(view) is not None, NO_SPECULATIVE)])
def speculative_proposers(view: PackageView) -> Iterator[Finding]:
    spec = read_speculative(view)
    if spec is None:
        return
    for name, raw in spec.proposers.items():
        yield from _proposer(json_path(f"{SPEC}.proposers", name), name, raw, spec.layer_count)


def _proposer(where: str, name: Any, raw: Any, layers: int | None) -> Iterator[Finding]:
    if not isinstance(name, str) or not name.strip():
        yield _f("empty_speculative_proposer_name", f"{where}: proposer names must be non-empty")
    if not isinstance(raw, dict):
        yield _f("invalid_manifest_field", f"{where} must be an object, found {type_name(raw)}")
        return
    kind = raw.get("type")
    if kind == NATIVE_MTP:
        yield from _native_mtp_fields(where, raw, layers)
    elif _is(kind, NGRAM_TYPES):
        yield from _ngram_fields(where, str(kind), raw)
    else:
        yield _f("unsupported_speculative_proposer_type",
                 f"{where}.type is {_describe(kind)}; supported: "
                 f"{', '.join(sorted(PROPOSER_TYPES))}")
        if kind == SPEC_ONLY_PROPOSER_TYPE:
            yield _f("speculative_spec_disagreement",
                     f"{where}.type is {SPEC_ONLY_PROPOSER_TYPE!r}: package.md lists it, but "
                     "mesh-llm's package tool rejects it; use ngram-cache or ngram-suffix")
        return
    yield from _unknown_keys(where, raw, PROPOSER_KEYS)


# --- speculative_strategies -------------------------------------------------------------------
@register("speculative_strategies", order=52, codes=[
    "invalid_manifest_field", "unknown_manifest_field", "empty_speculative_strategy_name",
    "empty_speculative_strategy_type", "unsupported_speculative_strategy_type",
    "speculative_spec_disagreement", "legacy_speculative_strategy_id",
    "operator_only_speculative_strategy", "missing_speculative_proposer",
    "native_mtp_strategy_proposer_type_mismatch", "missing_ngram_strategy_proposer",
    "ngram_strategy_proposer_type_mismatch", "missing_composite_extension_policy",
    "missing_composite_primary", "missing_composite_extender", "invalid_composite_primary_type",
    "invalid_composite_extender_type", "unsupported_native_mtp_prediction_depth",
    "missing_native_mtp_layers", "native_mtp_layer_out_of_range",
    "invalid_ngram_proposer_window", "invalid_ngram_proposer_max_tokens",
    "unsupported_ngram_cache_max_window", "invalid_ngram_cache_history_scope",
    "invalid_ngram_suffix_history_scope", "unsupported_ngram_suffix_window",
    "invalid_extension_policy_tokens", "empty_window_policy_default",
    "invalid_window_policy_zero", "invalid_window_policy_pipeline_depth",
    "invalid_window_policy_bounds", "invalid_window_policy_initial",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: read_speculative(view) is not None, NO_SPECULATIVE)])
def speculative_strategies(view: PackageView) -> Iterator[Finding]:
    spec = read_speculative(view)
    if spec is None:
        return
    default = spec.default_strategy_id()
    for name, raw in spec.strategies.items():
        where = json_path(f"{SPEC}.strategies", name)
        yield from _strategy(where, name, raw, spec, is_default=name == default)


def _strategy(where: str, name: Any, raw: Any, spec: Speculative, *, is_default: bool
              ) -> Iterator[Finding]:
    if not isinstance(name, str) or not name.strip():
        yield _f("empty_speculative_strategy_name", f"{where}: strategy ids must be non-empty")
    else:
        yield from _strategy_id(where, name)
    if not isinstance(raw, dict):
        yield _f("invalid_manifest_field", f"{where} must be an object, found {type_name(raw)}")
        return
    kind = raw.get("type")
    if kind == DRAFT_MODEL and not is_default:
        yield _f("speculative_spec_disagreement",
                 f"{where}.type is {DRAFT_MODEL!r}: package.md lets consumers ignore it unless "
                 "it is the default, but mesh-llm's package tool rejects the package "
                 "(unsupported_speculative_strategy_type)")
        return
    if raw.get("proposer") is not None:
        yield from _reference(where, "proposer", raw["proposer"], spec)
    yield from _strategy_body(where, kind, raw, spec)
    if raw.get("extension_policy") is not None:
        yield from _extension_policy(f"{where}.extension_policy", raw["extension_policy"])
    if raw.get("window_policy") is not None:
        yield from window_policy(f"{where}.window_policy", raw["window_policy"])
    if _is(kind, STRATEGY_TYPES):  # an unsupported type's fields are its own business
        yield from _unknown_keys(where, raw, STRATEGY_KEYS)


def _strategy_body(where: str, kind: Any, raw: dict[str, Any], spec: Speculative
                   ) -> Iterator[Finding]:
    """The rules of the strategy's type."""
    if kind == NATIVE_MTP:
        yield from _native_mtp_strategy(where, raw, spec)
    elif _is(kind, NGRAM_TYPES):
        yield from _ngram_strategy(where, str(kind), raw, spec)
    elif kind == COMPOSITE:
        yield from _composite_strategy(where, raw, spec)
    elif not isinstance(kind, str) or not kind.strip():
        said = "blank" if isinstance(kind, str) else _describe(kind)
        yield _f("empty_speculative_strategy_type", f"{where}.type is {said}")
    else:
        why = " (the declared default)" if kind == DRAFT_MODEL else ""
        yield _f("unsupported_speculative_strategy_type",
                 f"{where}.type is {shown(kind)}{why}; supported: "
                 f"{', '.join(sorted(STRATEGY_TYPES))}")


def _reference(where: str, field: str, ref: Any, spec: Speculative) -> Iterator[Finding]:
    """A proposer reference must be the name of a declared proposer."""
    if not isinstance(ref, str):
        yield _f("missing_speculative_proposer",
                 f"{where}.{field} must name a declared proposer, found {_describe(ref)}")
    elif ref not in spec.proposers:
        declared = _names(spec.proposers)
        yield _f("missing_speculative_proposer",
                 f"{where}.{field} names proposer {shown(ref)}, which is not declared under "
                 f"{SPEC}.proposers (declared: {declared})")


def _native_mtp_strategy(where: str, raw: dict[str, Any], spec: Speculative
                         ) -> Iterator[Finding]:
    """Either reference a native-mtp proposer or carry prediction_depth and layer_indices."""
    ref = raw.get("proposer")
    if ref is None:
        yield from _native_mtp_fields(where, raw, spec.layer_count)
        return
    proposer = spec.proposer(ref)
    if proposer is not None and proposer.get("type") != NATIVE_MTP:
        yield _f("native_mtp_strategy_proposer_type_mismatch",
                 f"{where}.proposer names {shown(ref)}, whose type is "
                 f"{_describe(proposer.get('type'))}, not {NATIVE_MTP!r}")


def _ngram_strategy(where: str, kind: str, raw: dict[str, Any], spec: Speculative
                    ) -> Iterator[Finding]:
    """Reference a proposer of the same type, or carry the n-gram fields inline."""
    ref = raw.get("proposer")
    if ref is None:
        if not NGRAM_FIELDS & raw.keys():
            yield _f("missing_ngram_strategy_proposer",
                     f"{where} has no proposer and no n-gram fields; reference a declared "
                     f"{kind} proposer")
            return
        yield _f("speculative_spec_disagreement",
                 f"{where} carries its n-gram fields inline; mesh-llm's package tool requires "
                 "n-gram strategies to reference a declared proposer "
                 "(missing_ngram_strategy_proposer there)")
        yield from _ngram_fields(where, kind, raw)
        return
    proposer = spec.proposer(ref)
    if proposer is not None and proposer.get("type") != kind:
        yield _f("ngram_strategy_proposer_type_mismatch",
                 f"{where}.type is {shown(kind)} but its proposer {shown(ref)} has type "
                 f"{_describe(proposer.get('type'))}")


def _composite_strategy(where: str, raw: dict[str, Any], spec: Speculative
                        ) -> Iterator[Finding]:
    """primary: a native-mtp proposer; extender: an n-gram proposer; extension_policy set."""
    if raw.get("extension_policy") is None:
        yield _f("missing_composite_extension_policy",
                 f"{where}.extension_policy is missing; composite strategies need one with "
                 "max_tokens > 0")
    parts = (("primary", "missing_composite_primary", "invalid_composite_primary_type",
              frozenset({NATIVE_MTP})),
             ("extender", "missing_composite_extender", "invalid_composite_extender_type",
              NGRAM_TYPES))
    for field, missing_code, type_code, allowed in parts:
        ref = raw.get(field)
        if ref is None or (isinstance(ref, str) and not ref.strip()):
            yield _f(missing_code, f"{where}.{field} is {_describe(ref)}; name a declared "
                     f"{' or '.join(sorted(allowed))} proposer")
            continue
        yield from _reference(where, field, ref, spec)
        proposer = spec.proposer(ref)
        if proposer is not None and not _is(proposer.get("type"), allowed):
            yield _f(type_code, f"{where}.{field} names {shown(ref)}, whose type is "
                     f"{_describe(proposer.get('type'))}; it must be "
                     f"{' or '.join(sorted(allowed))}")
