"""Generation defaults (package.md, `generation`): policy, thresholds and forbidden fields.

Manifest-only rules. `generation.speculative_decoding` has its own module (speculative.py);
`glm_dsa_contract_violation` needs GGUF tensors and lives with the tensor checks.

Three responsibilities are kept apart by the spec: `policy` (portable semantic choices),
`thresholds` (numeric resolver hints) and `speculative_decoding`. Anything model-family or
backend specific is forbidden anywhere under `generation`; unknown profiles, phase values and
experimental switches are reported, never reinterpreted.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, applicable, asked_for, register
from meshcert.certify.manifest_model import generation, is_int
from meshcert.certify.manifest_parse import MANIFEST_NAME
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.constants import MODEL_ARCH_NAMES

GENERATION_KEYS = frozenset({"policy", "thresholds", "speculative_decoding"})
KNOWN_PROFILES = frozenset({"glm-dsa-v1"})
PHASE_FIELDS = ("decode", "short_prefill", "long_prefill", "verify")
PHASE_VALUES = frozenset({"auto", "dense", "direct-sparse", "compact-flash", "sparse-chunked",
                          "fallback"})
INDEXSHARE_VALUES = frozenset({"required"})
EVIDENCE_GATED = "evidence-gated"
EXPERIMENTAL_SWITCHES = ("selected_row_flash", "moe_weighted_down", "moe_merged_shared_gate_up")
# `enabled` is what a switch becomes once the evidence report gives it a `promote` verdict
# (checked by generation_evidence when evidence is supplied); `disabled` turns it off.
EXPERIMENTAL_VALUES = frozenset({EVIDENCE_GATED, "enabled", "disabled"})
# mesh-llm's package tool cannot parse a policy without these (they are not Option<> there).
REQUIRED_POLICY_FIELDS = ("profile", *PHASE_FIELDS)
POLICY_KEYS = frozenset({*REQUIRED_POLICY_FIELDS, "indexshare", "experimental"})
PROMOTE = "promote"

U32_MAX = 2**32 - 1
U64_MAX = 2**64 - 1
# threshold -> (unit, largest value mesh-llm can parse: u32, or u64 for bytes)
THRESHOLDS: dict[str, tuple[str, int]] = {
    "short_prefill_max_tokens": ("tokens", U32_MAX),
    "compact_flash_min_kv": ("KV rows", U32_MAX),
    "dense_mask_max_bytes": ("bytes", U64_MAX),
    "direct_sparse_decode_max_top_k": ("top-k rows", U32_MAX),
}

# --- forbidden field names -------------------------------------------------------------------
# Whole name tokens that select a backend, a kernel or a kernel launch knob.
BACKEND_TOKENS = frozenset({
    "metal", "cuda", "cpu", "gpu", "vulkan", "skippy", "rocm", "hip", "sycl", "opencl", "mps",
    "backend", "backends", "kernel", "kernels", "simd", "simdgroup", "simdgroups", "threadgroup",
    "threadgroups", "workgroup", "workgroups", "warp", "warps", "dispatch", "nsg", "nr0", "nr1",
})
# Substrings of the squashed (lower-case, separators removed) name: knobs and kernel names.
BACKEND_FRAGMENTS = ("simdgroup", "rowheight", "threadgroup", "kernel", "dispatch", "mulmv",
                     "mulmm", "flashattnext")
# Family roots that are also ordinary words a generation field could use.
_NOT_FAMILIES = frozenset({"clip", "command", "deci", "dream", "modern", "neo", "plm", "rnd",
                           "seed", "step"})
_EXTRA_FAMILIES = frozenset({"glm", "kimi", "minimax", "mixtral", "yi"})


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


def _tokens(name: str) -> list[str]:
    """Split snake, kebab, dotted and camelCase names into lower-case tokens."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^a-z0-9]+", spaced.lower()) if t]


def _family_names() -> tuple[frozenset[str], frozenset[str]]:
    """(squashed architecture names, family roots) from the gguf library's architecture table."""
    arches = {str(name) for name in MODEL_ARCH_NAMES.values()}
    roots = {m.group() for a in arches if (m := re.match(r"[a-z]+", a.lower()))}
    roots = {r for r in roots if len(r) >= 3} - _NOT_FAMILIES
    return frozenset(_squash(a) for a in arches), frozenset(roots | _EXTRA_FAMILIES)


_ARCH_NAMES, _FAMILY_ROOTS = _family_names()


def names_backend(key: str) -> bool:
    """True when a field name selects a backend or kernel (metal, cuda, nsg, row_height...)."""
    squashed = _squash(key)
    return (any(t in BACKEND_TOKENS for t in _tokens(key)) or squashed in BACKEND_TOKENS
            or any(fragment in squashed for fragment in BACKEND_FRAGMENTS))


def names_model_family(key: str) -> bool:
    """True when a field name names a model family (glm_dsa, qwen3, deepseek_v3, llama...)."""
    if _squash(key) in _ARCH_NAMES:
        return True
    tokens = _tokens(key)
    root = re.match(r"[a-z]+", tokens[0]) if tokens else None
    return root is not None and root.group() in _FAMILY_ROOTS


# --- helpers ---------------------------------------------------------------------------------
def _f(code: str, message: str) -> Finding:
    return finding(code, message, path=MANIFEST_NAME)


def shown(value: object, limit: int = 80) -> str:
    """repr() for a message, cut short: a manifest value can be megabytes long."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def json_path(base: str, key: object) -> str:
    """`base.key`, or `base["odd key"]` when the key is not a plain name."""
    text = str(key)
    if re.fullmatch(r"[A-Za-z0-9_-]+", text):
        return f"{base}.{text}"
    return f"{base}[{shown(text)}]"


def type_name(value: object) -> str:
    """The JSON name of a value's type, for messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _section(gen: dict[str, Any], key: str) -> dict[str, Any] | None:
    value = gen.get(key)
    return value if isinstance(value, dict) else None


def _generation(view: PackageView) -> dict[str, Any] | None:
    return generation(view.manifest) if view.manifest is not None else None


def _policy(view: PackageView) -> dict[str, Any] | None:
    gen = _generation(view)
    return _section(gen, "policy") if gen is not None else None


def _levels(gen: dict[str, Any]) -> Iterator[tuple[str, Any, frozenset[str], str]]:
    """The objects whose own field names the spec defines: (path, value, known names, code for
    an unknown name)."""
    yield "generation", gen, GENERATION_KEYS, "unknown_manifest_field"
    policy = gen.get("policy")
    yield "generation.policy", policy, POLICY_KEYS, "unknown_manifest_field"
    if isinstance(policy, dict):
        yield ("generation.policy.experimental", policy.get("experimental"),
               frozenset(EXPERIMENTAL_SWITCHES), "unknown_experimental_policy")
    thresholds = gen.get("thresholds")
    yield "generation.thresholds", thresholds, frozenset(THRESHOLDS), "unknown_manifest_field"


# --- generation_fields: shape, unknown, model-family and backend fields ------------------------
@register("generation_fields", order=40, codes=[
    "invalid_manifest_field", "unknown_manifest_field", "unknown_experimental_policy",
    "model_family_generation_object", "backend_specific_generation_field",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: (view.manifest or {}).get("generation") is not None,
    "the manifest declares no generation section")])
def generation_fields(view: PackageView) -> Iterator[Finding]:
    """Every field name under `generation`: known, forbidden, or reported as unknown."""
    manifest = view.manifest
    if manifest is None or manifest.get("generation") is None:
        return
    gen = manifest["generation"]
    if not isinstance(gen, dict):
        yield _f("invalid_manifest_field",
                 f"generation must be an object, found {type_name(gen)}")
        return
    for where, obj, known, unknown_code in _levels(gen):
        yield from _level_fields(where, obj, known, unknown_code)
    yield from _backend_fields("generation", gen)


def _level_fields(where: str, obj: Any, known: frozenset[str], unknown_code: str
                  ) -> Iterator[Finding]:
    if obj is None:
        return
    if not isinstance(obj, dict):
        yield _f("invalid_manifest_field", f"{where} must be an object, found {type_name(obj)}")
        return
    for key in obj:
        if key in known or names_backend(str(key)):  # backend names: _backend_fields
            continue
        path = json_path(where, key)
        if names_model_family(str(key)):
            yield _f("model_family_generation_object",
                     f"{path} is a model-family field; generation holds portable policy only "
                     "(declare the family through generation.policy.profile)")
        elif unknown_code == "unknown_experimental_policy":
            yield _f(unknown_code, f"{path} is not a known experimental switch (known: "
                     f"{', '.join(EXPERIMENTAL_SWITCHES)}); it is reported, not reinterpreted")
        else:
            yield finding("unknown_manifest_field", f"unknown field {path} (ignored)",
                          path=MANIFEST_NAME)


_ID_MAPS = frozenset({"generation.speculative_decoding.proposers",
                      "generation.speculative_decoding.strategies"})


def _backend_fields(where: str, value: Any) -> Iterator[Finding]:
    """Backend/kernel field names anywhere below `where` (not below one already reported).

    The keys of the proposers/strategies maps are ids, not fields: only their contents count.
    """
    if isinstance(value, list):
        for i, item in enumerate(value):
            yield from _backend_fields(f"{where}[{i}]", item)
        return
    if not isinstance(value, dict):
        return
    for key, item in value.items():
        path = json_path(where, key)
        if where not in _ID_MAPS and names_backend(str(key)):
            yield _f("backend_specific_generation_field",
                     f"{path} selects a backend or kernel; manifests hold portable policy only "
                     "(benchmark knobs belong in evidence reports)")
        else:
            yield from _backend_fields(path, item)


# --- generation_policy: the values of the known policy fields ------------------------------------
@register("generation_policy", order=41, codes=[
    "empty_generation_policy_field", "unknown_generation_profile",
    "unknown_generation_policy_value",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: _policy(view) is not None, "the manifest declares no generation.policy object")])
def generation_policy(view: PackageView) -> Iterator[Finding]:
    gen = _generation(view)
    policy = _section(gen, "policy") if gen is not None else None
    if policy is None:
        return
    for name in REQUIRED_POLICY_FIELDS:
        allowed = KNOWN_PROFILES if name == "profile" else PHASE_VALUES
        yield from _policy_value(f"generation.policy.{name}", policy.get(name), allowed,
                                 required=True)
    yield from _policy_value("generation.policy.indexshare", policy.get("indexshare"),
                             INDEXSHARE_VALUES, required=False)
    experimental = policy.get("experimental")
    if isinstance(experimental, dict):
        for name in EXPERIMENTAL_SWITCHES:
            yield from _policy_value(f"generation.policy.experimental.{name}",
                                     experimental.get(name), EXPERIMENTAL_VALUES, required=False)


def _policy_value(where: str, value: Any, allowed: frozenset[str], *, required: bool
                  ) -> Iterator[Finding]:
    """One policy field: present when required, a non-blank string, and a known value."""
    if value is None:
        if required:
            yield _f("empty_generation_policy_field",
                     f"{where} is missing; a policy must set profile, decode, short_prefill, "
                     "long_prefill and verify (mesh-llm cannot load it otherwise)")
        return
    if not isinstance(value, str):
        yield _f("unknown_generation_policy_value",
                 f"{where} must be a string, found {type_name(value)} {shown(value)}")
    elif not value.strip():
        yield _f("empty_generation_policy_field", f"{where} is blank")
    elif value not in allowed:
        code = ("unknown_generation_profile" if where.endswith(".profile")
                else "unknown_generation_policy_value")
        yield _f(code, f"{where} is {shown(value)}, which is not supported (known: "
                 f"{', '.join(sorted(allowed))}); it is reported, never reinterpreted")


# --- generation_thresholds ------------------------------------------------------------------
@register("generation_thresholds", order=42, codes=[
    "invalid_generation_threshold_zero", "invalid_generation_threshold",
], formats=["v1"], runs_when=[MANIFEST_READ, applicable(
    lambda view: _section(_generation(view) or {}, "thresholds") is not None,
    "the manifest declares no generation.thresholds object")])
def generation_thresholds(view: PackageView) -> Iterator[Finding]:
    gen = _generation(view)
    thresholds = _section(gen, "thresholds") if gen is not None else None
    if thresholds is None:
        return
    for name, (unit, limit) in THRESHOLDS.items():
        value = thresholds.get(name)
        if value is not None:
            yield from _threshold(f"generation.thresholds.{name}", value, unit, limit)


def _threshold(where: str, value: Any, unit: str, limit: int) -> Iterator[Finding]:
    if value == 0 and is_int(value):
        yield _f("invalid_generation_threshold_zero",
                 f"{where} is 0; a zero threshold is invalid (remove it to use the default)")
    elif not is_int(value):
        yield _f("invalid_generation_threshold",
                 f"{where} must be a positive integer ({unit}), found {type_name(value)} "
                 f"{shown(value)}")
    elif value < 0:
        yield _f("invalid_generation_threshold",
                 f"{where} is {value}; thresholds are positive integers ({unit})")
    elif value > limit:
        yield _f("invalid_generation_threshold",
                 f"{where} is {value}, above the largest value mesh-llm reads ({limit})")


# --- policy_not_supported_by_evidence ---------------------------------------------------------
@register("generation_evidence", order=43, codes=["policy_not_supported_by_evidence"],
          formats=["v1"], runs_when=[
              asked_for("--evidence decisions.json",
                        lambda view: view.options.evidence_verdicts is not None),
              MANIFEST_READ, applicable(
                  lambda view: isinstance((_policy(view) or {}).get("experimental"), dict),
                  "the manifest declares no generation.policy.experimental switches")])
def generation_evidence(view: PackageView) -> Iterator[Finding]:
    """With evidence supplied: an experimental switch moved off `evidence-gated` needs a
    `promote` verdict for that policy."""
    verdicts = view.options.evidence_verdicts
    gen = _generation(view)
    policy = _section(gen, "policy") if gen is not None else None
    experimental = policy.get("experimental") if policy is not None else None
    if verdicts is None or not isinstance(experimental, dict):
        return
    for name in EXPERIMENTAL_SWITCHES:
        value = experimental.get(name)
        if value is None or value == EVIDENCE_GATED or (isinstance(value, str)
                                                        and not value.strip()):
            continue
        verdict = verdicts.get(name)
        if verdict != PROMOTE:
            said = f"verdict {shown(verdict)}" if verdict is not None else "no verdict"
            yield _f("policy_not_supported_by_evidence",
                     f"generation.policy.experimental.{name} is {shown(value)}, but the evidence "
                     f"gives {said} for {name} (only {PROMOTE!r} allows leaving "
                     f"{EVIDENCE_GATED!r})")
