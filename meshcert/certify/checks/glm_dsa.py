"""Profile ``glm-dsa-v1`` may only be declared for artifacts that can run it (package.md).

It needs GGUF architecture ``glm-dsa``; split MLA attention (``attn_k_b``, ``attn_v_b``,
``attn_kv_a_mqa``) in every layer; routed (``ffn_*_exps``) and shared (``ffn_*_shexp``) expert
tensors and indexer tensors in the package (dense leading layers and IndexShare layers may lack
them, so they are required somewhere, not everywhere); the three indexer metadata keys; the
NextN tensors in the last ``nextn_predict_layers`` layers when the metadata declares them; and
policy and threshold values that agree with the profile. A value the manifest leaves out is
implied by the profile; a value it sets differently contradicts it. Each problem is its own
finding naming what is missing or wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from meshcert.certify.checks import MANIFEST_READ, applicable, register
from meshcert.certify.manifest_model import generation, is_int
from meshcert.certify.package_gguf.fragments import (
    Fragment,
    fragments,
    package_architecture,
    preview,
    reference_fragment,
)
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.names import (
    GLM_DSA_ARCH,
    GLM_DSA_INDEXER,
    GLM_DSA_INDEXER_KEYS,
    GLM_DSA_ROUTED_EXPERTS,
    GLM_DSA_SHARED_EXPERTS,
    GLM_DSA_SPLIT_ATTENTION,
    NEXTN_PREDICT_LAYERS_KEY,
    is_nextn,
    layer_component,
)

PROFILE = "glm-dsa-v1"
PROFILE_POLICY = {"decode": "compact-flash", "short_prefill": "dense",
                  "long_prefill": "sparse-chunked", "verify": "auto", "indexshare": "required"}
PROFILE_EXPERIMENTAL = {"selected_row_flash": "evidence-gated",
                        "moe_weighted_down": "evidence-gated",
                        "moe_merged_shared_gate_up": "evidence-gated"}
PROFILE_THRESHOLDS = {"short_prefill_max_tokens": 2048, "compact_flash_min_kv": 1,
                      "dense_mask_max_bytes": 268435456}
CODE = "glm_dsa_contract_violation"


def _profile(view: PackageView) -> object:
    policy = (generation(view.manifest or {}) or {}).get("policy")
    return policy.get("profile") if isinstance(policy, dict) else None


def _carrier_architecture(view: PackageView) -> str | None:
    carrier = view.carrier_entry()
    header = view.headers.get(carrier.path) if carrier is not None else None
    return header.architecture if isinstance(header, GGUFHeader) else None


@register("glm_dsa_contract", order=350, codes=[CODE], formats=["v1"], runs_when=[
    MANIFEST_READ, applicable(lambda view: _profile(view) == PROFILE,
                              f"generation.policy.profile is not {PROFILE}")])
def check_glm_dsa_contract(view: PackageView) -> Iterator[Finding]:
    gen = generation(view.manifest) if view.manifest is not None else None
    if gen is None:
        return
    policy = gen.get("policy")
    if not isinstance(policy, dict) or policy.get("profile") != PROFILE:
        return
    promoted = {name for name, verdict in (view.options.evidence_verdicts or {}).items()
                if verdict == "promote"}
    for problem in _value_problems(policy, gen.get("thresholds"), promoted):
        yield finding(CODE, f"{PROFILE}: {problem}", path="model-package.json")
    frags = fragments(view)
    if not frags:
        return  # nothing readable to hold evidence; the structure checks report why
    for problem, path in _artifact_problems(frags):
        yield finding(CODE, f"{PROFILE}: {problem}", path=path)


def _value_problems(policy: dict[str, Any], thresholds: Any,
                    promoted: set[str]) -> Iterator[str]:
    """Values contradicting the profile; a switch the evidence promoted may be `enabled`."""
    for name, wanted in PROFILE_POLICY.items():
        if name in policy and policy[name] != wanted:
            yield f"generation.policy.{name} is {policy[name]!r}, the profile requires {wanted!r}"
    experimental = policy.get("experimental")
    if isinstance(experimental, dict):
        for name, wanted in PROFILE_EXPERIMENTAL.items():
            value = experimental.get(name, wanted)
            if value != wanted and not (value == "enabled" and name in promoted):
                yield (f"generation.policy.experimental.{name} is {experimental[name]!r}, the "
                       f"profile requires {wanted!r}")
    if isinstance(thresholds, dict):
        for name, wanted_int in PROFILE_THRESHOLDS.items():
            value = thresholds.get(name, wanted_int)
            if not (is_int(value) and value == wanted_int):
                yield (f"generation.thresholds.{name} is {value!r}, the profile requires "
                       f"{wanted_int}")


def _artifact_problems(frags: list[Fragment]) -> Iterator[tuple[str, str | None]]:
    ref = reference_fragment(frags)
    layers = {f.layer_index: (f.path, f.tensor_names()) for f in frags
              if f.role == "layer" and f.layer_index is not None}
    yield from contract_problems(package_architecture(frags), ref.header.kv if ref else {},
                                 ref.path if ref else None, layers)


def contract_problems(arch: str | None, kv: dict[str, Any], ref_path: str | None,
                      layers: dict[int, tuple[str, list[str]]]
                      ) -> Iterator[tuple[str, str | None]]:
    """The architecture part of the contract, from metadata and each layer's tensor names
    (v1: the layer fragments; v2: the carrier's tensor catalog grouped by layer ordinal)."""
    if arch != GLM_DSA_ARCH:
        yield f"the GGUF architecture is {arch!r}, the profile requires {GLM_DSA_ARCH!r}", ref_path
    components = {i: {layer_component(n) for n in names}
                  for i, (_, names) in sorted(layers.items())}
    for kind in GLM_DSA_SPLIT_ATTENTION:
        lacking = [str(i) for i, have in components.items() if kind not in have]
        if lacking:
            yield (f"split attention tensor {kind} is missing from layer(s) {preview(lacking)}",
                   None)
    everywhere = set().union(*components.values()) if components else set()
    for group, kinds in (("routed expert", GLM_DSA_ROUTED_EXPERTS),
                         ("shared expert", GLM_DSA_SHARED_EXPERTS),
                         ("indexer", GLM_DSA_INDEXER)):
        absent = [k for k in kinds if k not in everywhere]
        if absent:
            yield f"no layer holds the {group} tensor(s) {', '.join(absent)}", None
    missing_keys = [f"{GLM_DSA_ARCH}.{k}" for k in GLM_DSA_INDEXER_KEYS
                    if f"{GLM_DSA_ARCH}.{k}" not in kv]
    if missing_keys:
        yield f"metadata lacks the indexer key(s) {', '.join(missing_keys)}", ref_path
    yield from _nextn_problems(kv, layers)


def _nextn_problems(kv: dict[str, Any], layers: dict[int, tuple[str, list[str]]]
                    ) -> Iterator[tuple[str, str | None]]:
    """The metadata's nextn_predict_layers K means the last K blocks carry NextN tensors."""
    count = kv.get(f"{GLM_DSA_ARCH}.{NEXTN_PREDICT_LAYERS_KEY}")
    blocks = kv.get(f"{GLM_DSA_ARCH}.block_count")
    if not (is_int(count) and is_int(blocks) and 0 < count <= blocks):
        return
    for index in range(blocks - count, blocks):
        if index in layers:
            path, names = layers[index]
            if not any(is_nextn(n) for n in names):
                yield (f"{NEXTN_PREDICT_LAYERS_KEY} is {count} but layer {index} ({path}) has "
                       "no NextN/MTP tensors (blk.N.nextn.*)", path)


@register("glm_dsa_architecture_v2", order=350, codes=[CODE], formats=["v2"], runs_when=[
    applicable(lambda view: _carrier_architecture(view) == GLM_DSA_ARCH,
               f"the metadata carrier's architecture is not {GLM_DSA_ARCH}"),
    applicable(lambda view: (tensors := view.tensor_catalog()) is not None and tensors.usable,
               "the tensor catalog could not be read (see v2_tensor_catalog)")])
def check_glm_dsa_architecture_v2(view: PackageView) -> Iterator[Finding]:
    """v2 has no generation.policy, so no profile to hold to: a package whose carrier says
    `glm-dsa` is held to the architecture part of the contract (package-v2.md, "GLM-DSA on
    v2"), from the carrier's metadata and tensor catalog alone."""
    carrier = view.carrier_entry()
    header = view.headers.get(carrier.path) if carrier is not None else None
    tensor_catalog = view.tensor_catalog()
    if not isinstance(header, GGUFHeader) or header.architecture != GLM_DSA_ARCH \
            or tensor_catalog is None or not tensor_catalog.usable:
        return
    layers: dict[int, tuple[str, list[str]]] = {}
    for t in tensor_catalog.tensors:
        if t.layer_ordinal is not None and t.artifact is not None:
            layers.setdefault(t.layer_ordinal, (str(t.artifact.path), []))[1].append(t.name)
    for problem, where in contract_problems(header.architecture, header.kv,
                                            str(carrier.path) if carrier else None, layers):
        yield finding(CODE, f"GLM-DSA architecture: {problem}", path=where)
