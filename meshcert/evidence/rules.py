"""Evidence rules as data: rows, required sets, gates, decisions, environment variables.

Everything `glm52-phase-e-moe-report.sh` (and its Phase D sibling) looks up is a row of a table
here, so adding a fixture, a gate or a decision is a table row, not new control flow. The code in
`gates.py` / `decisions.py` only interprets these tables.

Row matching (`RowSpec.matches`): same op name, same variant label, and every required param is
present in the row's parsed param dict with an equal value (stricter than the script, which took
the first row whose text contained all "needles").
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from meshcert.evidence.defaults import REQUIRE_GATES

ParamValue = int | float | str | tuple[int | float | str, ...]
Phase = Literal["E", "E-sweep", "D", "user"]  # "user": from a --decisions file
# When a row is required by the Phase E gate (with gates on):
#   "always": one of the 15; "sweep": with GLM52_PHASE_E_KERNEL_SWEEP non-zero; "never": optional.
Requirement = Literal["always", "sweep", "never"]
GateKind = Literal["promotion", "review-tripwire", "guard"]
GateWhen = Literal["always", "sweep", "sanity"]
Comparator = Literal[">", ">=", "<", "<="]
DecisionKind = Literal["review-tripwire", "quant-recipe", "experimental", "phase-default"]

DEFAULT_VARIANT = "default"


# --------------------------------------------------------------------------------------------
# Environment variables (same names and defaults as the script); parsed in `settings.py`.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvVar:
    name: str
    default: str
    kind: Literal["flag", "ratio"]  # flag: integer, non-zero = on; ratio: positive number
    meaning: str


KERNEL_SWEEP = "GLM52_PHASE_E_KERNEL_SWEEP"
Q2_FFN_MIN_SPEEDUP = "GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP"
Q2_WEIGHTED_REVIEW_SPEEDUP = "GLM52_PHASE_E_Q2_WEIGHTED_REVIEW_SPEEDUP"
MERGED_SHEXP_REVIEW_SPEEDUP = "GLM52_PHASE_E_MERGED_SHEXP_REVIEW_SPEEDUP"
ROUTED_WHOLE_GRAPH_SANITY = "GLM52_PHASE_E_ROUTED_WHOLE_GRAPH_SANITY"

ENV_VARS: tuple[EnvVar, ...] = (
    EnvVar(REQUIRE_GATES, "0", "flag", "non-zero: hard gate, exit 2 on any failure"),
    EnvVar(KERNEL_SWEEP, "0", "flag", "non-zero: sweep rows are required too"),
    EnvVar(Q2_FFN_MIN_SPEEDUP, "1.08", "ratio",
           "combined FFN q3_K-down / q2_K-down must be at least this"),
    EnvVar(Q2_WEIGHTED_REVIEW_SPEEDUP, "1.02", "ratio",
           "combined q2 / q2-weighted above this -> revisit q2 unweighted policy"),
    EnvVar(MERGED_SHEXP_REVIEW_SPEEDUP, "1.02", "ratio",
           "combined q3 / q3-merged-shexp above this -> revisit disabled merged shared-expert "
           "policy"),
    EnvVar(ROUTED_WHOLE_GRAPH_SANITY, "1", "flag",
           "non-zero: evaluate the routed whole-graph sanity probe rows that are present"),
)
ENV_BY_NAME: Mapping[str, EnvVar] = {v.name: v for v in ENV_VARS}


# --------------------------------------------------------------------------------------------
# Rows
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowSpec:
    """One benchmark row the rules look up.

    `label` is the stable key the other tables refer to; `title` is what a reviewer reads (and
    what the missing-rows error lists, so it never contains a comma).
    """

    label: str
    title: str
    phase: Phase
    op: str
    params: Mapping[str, ParamValue]
    requirement: Requirement = "never"
    variant: str = DEFAULT_VARIANT
    group: str = ""
    note: str = ""

    def matches(self, op: str, variant: str, param_dict: Mapping[str, object]) -> bool:
        return variant == self.variant and self.matches_params(op, param_dict)

    def matches_params(self, op: str, param_dict: Mapping[str, object]) -> bool:
        """Same op and every required param equal (the variant is not looked at)."""
        if op != self.op:
            return False
        return all(k in param_dict and _same(param_dict[k], v) for k, v in self.params.items())

    @property
    def pattern(self) -> str:
        """The required params as `OP(k=v,...)` text (a subset of the real row's params)."""
        return f"{self.op}({format_params(self.params)})"


def _same(actual: object, wanted: ParamValue) -> bool:
    if isinstance(wanted, tuple):
        return isinstance(actual, tuple | list) and tuple(actual) == wanted
    if isinstance(wanted, str):
        return isinstance(actual, str) and actual == wanted
    if isinstance(actual, bool) or not isinstance(actual, int | float):
        return False
    return float(actual) == float(wanted)


def format_value(value: object) -> str:
    if isinstance(value, tuple | list):
        return "[" + ",".join(format_value(v) for v in value) + "]"
    return str(value)


def format_params(params: Mapping[str, object]) -> str:
    return ",".join(f"{k}={format_value(v)}" for k, v in params.items())


# ---- Phase E (MoE FFN): all fixtures 256 experts, 8 used, 1 token --------------------------

_MMID: dict[str, ParamValue] = {"type_b": "f32", "n_mats": 256, "n_used": 8, "b": 0}
_Q3_DOWN: dict[str, ParamValue] = {"type_a": "q3_K", **_MMID, "m": 6144, "n": 1, "k": 2048}
_SHEXP_Q4: dict[str, ParamValue] = {"gate_type": "q4_K", "up_type": "q4_K", "down_type": "q4_K"}
_SHEXP_DIMS: dict[str, ParamValue] = {"n_embd": 6144, "n_ff": 2048, "n_tokens": 1}


def _ffn(down: str, weighted: int, merged: int) -> dict[str, ParamValue]:
    return {"routed_gate_type": "q2_K", "routed_up_type": "q2_K", "routed_down_type": down,
            "shexp_gate_type": "q4_K", "shexp_up_type": "q4_K", "shexp_down_type": "q4_K",
            "n_expert": 256, "n_expert_used": 8, "n_tokens": 1, "n_embd": 6144, "n_ff": 2048,
            "fused_glu": 1, "weighted_down": weighted, "merged_shexp_gate_up": merged}


def _small_graph(weighted: int, fused: int) -> dict[str, ParamValue]:
    return {"gate_type": "q2_K", "up_type": "q2_K", "down_type": "q3_K", "n_expert": 256,
            "n_expert_used": 8, "n_tokens": 1, "n_embd": 256, "n_ff": 256,
            "weighted_down": weighted, "fused_glu": fused}


def _shexp(t: str) -> dict[str, ParamValue]:
    return {"gate_type": t, "up_type": t, "down_type": t, **_SHEXP_DIMS, "fused_glu": 1,
            "merged_gate_up": 0}


_SHEXP_COMPONENTS = ("gate mm", "up mm", "unfused act*mul", "down mm", "final add",
                     "SwiGLU split", "merged gate/up mm + SwiGLU")

PHASE_E_ROWS: tuple[RowSpec, ...] = (
    RowSpec("route", "route", "E", "TOPK_MOE_GLM_ROUTE",
            {"n_expert": 256, "n_expert_used": 8, "n_tokens": 1}, "always", group="routed"),
    RowSpec("weighted_sum_1tok", "weighted sum 1 tok", "E", "MOE_WEIGHTED_SUM",
            {"n_embd": 6144, "n_expert_used": 8, "n_tokens": 1}, "always", group="routed"),
    RowSpec("weighted_sum_4tok", "weighted sum 4 tok", "E", "MOE_WEIGHTED_SUM",
            {"n_embd": 6144, "n_expert_used": 8, "n_tokens": 4}, group="routed"),
    RowSpec("routed_gate_up_q2_K", "routed q2_K gate/up", "E", "MUL_MAT_ID",
            {"type_a": "q2_K", **_MMID, "m": 2048, "n": 1, "k": 6144}, "always", group="routed",
            note="counted twice in the estimate (gate and up)"),
    RowSpec("routed_merged_gate_up_q2_K", "routed q2_K merged gate+up", "E", "MUL_MAT_ID",
            {"type_a": "q2_K", **_MMID, "m": 4096, "n": 1, "k": 6144}, group="routed"),
    RowSpec("routed_down_q3_K", "routed q3_K down", "E", "MUL_MAT_ID", _Q3_DOWN, "always",
            group="routed", note="production"),
    RowSpec("routed_down_q2_K", "routed q2_K down", "E", "MUL_MAT_ID",
            {**_Q3_DOWN, "type_a": "q2_K"}, "always", group="routed", note="alternative"),
    RowSpec("routed_swiglu_unfused", "routed SwiGLU unfused", "E", "TOPK_MOE_GLM_ACTIVATION",
            {"n_ff": 2048, "n_expert_used": 8, "n_tokens": 1, "fused_glu": 0}, group="routed"),
    RowSpec("routed_swiglu_fused", "routed fused SwiGLU", "E", "TOPK_MOE_GLM_ACTIVATION",
            {"n_ff": 2048, "n_expert_used": 8, "n_tokens": 1, "fused_glu": 1}, "always",
            group="routed"),
    RowSpec("small_graph_fused", "small routed fused whole graph", "E", "TOPK_MOE_GLM_CONSUMER",
            _small_graph(0, 1), "always", group="whole graph"),
    RowSpec("small_graph_unfused", "small routed unfused whole graph", "E",
            "TOPK_MOE_GLM_CONSUMER", _small_graph(0, 0), group="whole graph"),
    RowSpec("small_graph_weighted_fused", "small routed weighted fused whole graph", "E",
            "TOPK_MOE_GLM_CONSUMER", _small_graph(1, 1), group="whole graph"),
    RowSpec("small_graph_weighted_unfused", "small routed weighted unfused whole graph", "E",
            "TOPK_MOE_GLM_CONSUMER", _small_graph(1, 0), group="whole graph"),
    RowSpec("shexp_q4_K", "shared fused GLU q4_K", "E", "GLM_SHEXP_CONSUMER", _shexp("q4_K"),
            "always", group="shared", note="shared expert + final add"),
    RowSpec("shexp_q3_K", "shared q3_K fused GLU", "E", "GLM_SHEXP_CONSUMER", _shexp("q3_K"),
            "always", group="shared"),
    RowSpec("shexp_q2_K", "shared q2_K fused GLU", "E", "GLM_SHEXP_CONSUMER", _shexp("q2_K"),
            "always", group="shared"),
    RowSpec("ffn_q3_down", "combined FFN q3_K down", "E", "GLM_FFN_CONSUMER", _ffn("q3_K", 0, 0),
            "always", group="combined", note="production baseline"),
    RowSpec("ffn_q2_down", "combined FFN q2_K down", "E", "GLM_FFN_CONSUMER", _ffn("q2_K", 0, 0),
            "always", group="combined"),
    RowSpec("ffn_q2_down_weighted", "combined FFN q2_K weighted down", "E", "GLM_FFN_CONSUMER",
            _ffn("q2_K", 1, 0), "always", group="combined"),
    RowSpec("ffn_q3_down_merged_shexp", "combined FFN q3_K + merged shared gate/up", "E",
            "GLM_FFN_CONSUMER", _ffn("q3_K", 0, 1), "always", group="combined"),
    *(RowSpec(f"shexp_component_{i}",
              "shared SwiGLU split component" if i == 5 else f"shared component {i} {name}",
              "E", "GLM_SHEXP_COMPONENT", {"component": i, **_SHEXP_Q4, **_SHEXP_DIMS},
              "always" if i == 5 else "never", group="shared components")
      for i, name in enumerate(_SHEXP_COMPONENTS)),
    *(RowSpec(f"sanity_{down}_down{'_weighted' if w else ''}",
              f"sanity probe {down} {'weighted ' if w else ''}down", "E",
              "TOPK_MOE_GLM_CONSUMER_SANITY",
              {"down_type": down, "weighted_down": w, "n_embd": 6144, "n_ff": 2048,
               "fused_glu": 1}, group="sanity", note="optional")
      for down in ("q3_K", "q2_K") for w in (0, 1)),
)

# ---- Phase E kernel sweep: one row name, the variant is the environment of the run ---------


def _sweep(label: str, title: str, variant: str) -> RowSpec:
    return RowSpec(label, title, "E-sweep", "MUL_MAT_ID", _Q3_DOWN, "sweep", variant,
                   group="kernel sweep")


SWEEP_ROWS: tuple[RowSpec, ...] = (
    _sweep("sweep_mul_mm_id", "forced mul_mm_id q3_K down", "mul-mm-id-min-1"),
    *(_sweep(f"sweep_nsg_{n}", f"q3_K mul_mv_id nsg={n}", f"q3-k-mul-mv-id-nsg-{n}")
      for n in (1, 2, 4)),
    *(_sweep(f"sweep_nr0_{n}", f"q3_K mul_mv_id nr0={n}", f"q3-k-mul-mv-id-nr0-{n}")
      for n in (1, 2, 4, 8)),
    *(_sweep(f"sweep_glm_down_nsg_{n}", f"GLM-down k=2048 kernel nsg={n}",
             f"q3-k-mul-mv-id-glm-down-nsg-{n}") for n in (2, 4)),
)


@dataclass(frozen=True)
class DispatchCheckSpec:
    """A fixed-block dispatch check: a correctness-mode run (`test`) of the q3_K down fixture in
    its own variant (`fixed-block-dispatch/<variant>.console.log`).

    The evidence in the ingested table, all rows with `variant == self.variant`:
    - the kernel: `extra[k]` for the first key of `KERNEL_KEYS` present on any row of the
      fixture's op/params (the fork's `ggml_test: perf_metadata ... kernel=<name>` line, which
      ingest attaches to that row's `extra`; a `parity` row when the run is in test mode);
    - `parity_backend` rows (`N/M tests passed` per backend): at least one reads `1/1` (the
      backend that ran the case) and none failed a test (backends that skip the case print
      `0/0`);
    - the `parity_total` row: `K/K backends passed` must read `3/3`.
    """

    label: str
    title: str
    variant: str
    row: str  # RowSpec label whose op/params the dispatch is about
    expect_glm_down: bool
    tests: tuple[int, int] = (1, 1)
    backends: tuple[int, int] = (3, 3)


GLM_DOWN_KERNEL_MARK = "_glm_down"
KERNEL_KEYS = ("kernel", "kernel_name", "pipeline", "dispatch")

DISPATCH_CHECKS: tuple[DispatchCheckSpec, ...] = (
    DispatchCheckSpec("dispatch_default", "fixed-block dispatch check default",
                      "glm-down-default", "routed_down_q3_K", expect_glm_down=True),
    DispatchCheckSpec("dispatch_disabled", "fixed-block dispatch check disabled",
                      "glm-down-disabled", "routed_down_q3_K", expect_glm_down=False),
)

# ---- Phase D (attention): never required by the gate ---------------------------------------

DECODE_SHAPES: tuple[tuple[int, int], ...] = ((257, 64), (1024, 768), (2048, 768))
BOUNDARY_SHAPES: tuple[tuple[int, int], ...] = ((128, 128), (256, 256), (257, 257), (513, 513))
SHORT_BATCHES: tuple[int, ...] = (4, 8, 16)


def _direct_sparse(kv: int, batch: int, top_k: int | None) -> dict[str, ParamValue]:
    params: dict[str, ParamValue] = {"dk": 576, "dv": 512, "n_kv": kv, "n_batch": batch}
    if top_k is not None:
        params["n_top_k"] = top_k
    return params | {"dense_equiv": 0, "graph_equiv": 0}


PHASE_D_ROWS: tuple[RowSpec, ...] = (
    *(RowSpec(f"d_selected_row_flash_kv{kv}_top{t}", f"selected-row flash kv={kv} top_k={t}",
              "D", "GLM_DSA_SELECTED_ROW_FLASH", {"kv": kv, "top_k": t}, group="decode")
      for kv, t in DECODE_SHAPES + BOUNDARY_SHAPES),
    *(RowSpec(f"d_direct_sparse_kv{kv}_top{t}", f"direct sparse kv={kv} top_k={t}", "D",
              "DSA_SPARSE_ATTN", _direct_sparse(kv, 1, t), group="decode")
      for kv, t in DECODE_SHAPES + BOUNDARY_SHAPES),
    RowSpec("d_dense_flash_kv257_nb1", "dense masked flash kv=257 nb=1", "D", "FLASH_ATTN_EXT",
            {"hsk": 576, "hsv": 512, "kv": 257, "nb": 1}, group="decode"),
    *(RowSpec(f"d_direct_sparse_kv257_b{b}", f"direct sparse kv=257 n_batch={b}", "D",
              "DSA_SPARSE_ATTN", _direct_sparse(257, b, None), group="short prefill")
      for b in SHORT_BATCHES),
    *(RowSpec(f"d_dense_flash_kv257_nb{b}", f"dense masked flash kv=257 nb={b}", "D",
              "FLASH_ATTN_EXT", {"hsk": 576, "hsv": 512, "kv": 257, "nb": b},
              group="short prefill") for b in SHORT_BATCHES),
    RowSpec("d_compact_gather", "compact K gather kv=1024 top_k=768", "D",
            "GLM_DSA_COMPACT_K_GATHER", {"kv": 1024, "top_k": 768}, group="compact"),
    RowSpec("d_compact_flash_kv768", "flash over the compact rows kv=768 nb=1", "D",
            "FLASH_ATTN_EXT", {"hsk": 576, "hsv": 512, "kv": 768, "nb": 1}, group="compact",
            note="the flash half of compact gather + flash (768 gathered rows)"),
)

ALL_ROWS: tuple[RowSpec, ...] = PHASE_E_ROWS + SWEEP_ROWS + PHASE_D_ROWS
ROWS_BY_LABEL: Mapping[str, RowSpec] = {r.label: r for r in ALL_ROWS}


# --------------------------------------------------------------------------------------------
# The routed FFN decode estimate
# --------------------------------------------------------------------------------------------

Terms = tuple[tuple[str, float], ...]  # (row label, coefficient)

ESTIMATE_TERMS: Terms = (
    ("route", 1), ("routed_gate_up_q2_K", 2), ("routed_swiglu_fused", 1),
    ("routed_down_q3_K", 1), ("weighted_sum_1tok", 1),
)
ESTIMATE_SHARES: Mapping[str, tuple[str, ...]] = {
    "matmuls": ("routed_gate_up_q2_K", "routed_down_q3_K"),
    "SwiGLU": ("routed_swiglu_fused",),
    "route+sum": ("route", "weighted_sum_1tok"),
}
SHARED_EXPERT_ROW = "shexp_q4_K"
ESTIMATE_MISSING_MESSAGE = "Missing rows prevented the per-layer estimate."


def _estimate_with_down(down_label: str) -> Terms:
    return tuple((down_label if lbl == "routed_down_q3_K" else lbl, c)
                 for lbl, c in ESTIMATE_TERMS)


# --------------------------------------------------------------------------------------------
# Hard gates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GateSpec:
    """`value = sum(numerator) / sum(denominator)` (row medians x coefficients); the gate
    passes when `value <comparator> threshold`. The threshold is `threshold_env` (default from
    ENV_VARS) or the fixed `threshold`.

    `when`: "always"; "sweep" (only with GLM52_PHASE_E_KERNEL_SWEEP non-zero); "sanity" (only
    with GLM52_PHASE_E_ROUTED_WHOLE_GRAPH_SANITY non-zero, and only when its optional row is
    present). `fail` is the `error: ...` text (without the prefix), formatted with value,
    threshold, env.
    """

    name: str
    title: str
    kind: GateKind
    numerator: Terms
    denominator: Terms
    comparator: Comparator
    fail: str
    threshold: float | None = None
    threshold_env: str | None = None
    when: GateWhen = "always"
    unit: Literal["ratio", "share"] = "ratio"

    def default_threshold(self) -> float:
        if self.threshold_env is not None:
            return float(ENV_BY_NAME[self.threshold_env].default)
        assert self.threshold is not None
        return self.threshold


SANITY_MIN_SHARE = 0.25
SWIGLU_MAX_SHARE = 0.05
MUL_MM_ID_MIN_SLOWDOWN = 2.0

GATES: tuple[GateSpec, ...] = (
    GateSpec("q2_down_faster", "routed q2_K down faster than q3_K down", "guard",
             (("routed_down_q3_K", 1),), (("routed_down_q2_K", 1),), ">",
             "routed q2_K down is not faster than routed q3_K down "
             "(q3_K/q2_K = {value:.3f}x, needs > {threshold:.2f}x)", threshold=1.0),
    GateSpec("q2_ffn_min_speedup", "combined FFN q3_K down / q2_K down", "promotion",
             (("ffn_q3_down", 1),), (("ffn_q2_down", 1),), ">=",
             "combined FFN q3_K-down / q2_K-down speedup {value:.3f}x is below "
             "{env}={threshold:g}", threshold_env=Q2_FFN_MIN_SPEEDUP),
    GateSpec("q2_weighted_review", "combined FFN q2_K / q2_K weighted down", "review-tripwire",
             (("ffn_q2_down", 1),), (("ffn_q2_down_weighted", 1),), "<=",
             "combined FFN q2_K / q2_K weighted down speedup {value:.3f}x is above "
             "{env}={threshold:g}: revisit q2 unweighted policy",
             threshold_env=Q2_WEIGHTED_REVIEW_SPEEDUP),
    GateSpec("merged_shexp_review", "combined FFN q3_K / q3_K merged shared gate/up",
             "review-tripwire", (("ffn_q3_down", 1),), (("ffn_q3_down_merged_shexp", 1),), "<=",
             "combined FFN q3_K / q3_K merged shared gate/up speedup {value:.3f}x is above "
             "{env}={threshold:g}: revisit disabled merged shared-expert policy",
             threshold_env=MERGED_SHEXP_REVIEW_SPEEDUP),
    GateSpec("fused_swiglu_share", "routed fused SwiGLU share of the estimate", "guard",
             (("routed_swiglu_fused", 1),), ESTIMATE_TERMS, "<",
             "routed fused SwiGLU is {value:.1%} of the routed FFN decode estimate "
             "(must be under {threshold:.0%})", threshold=SWIGLU_MAX_SHARE, unit="share"),
    *(GateSpec(f"sanity_{r.label.removeprefix('sanity_')}", f"{r.title} vs isolated estimate",
               "guard", ((r.label, 1),),
               _estimate_with_down(f"routed_down_{r.params['down_type']}"), ">=",
               f"{r.title} is {{value:.1%}} of the isolated estimate (under "
               f"{{threshold:.0%}}): rejected", threshold=SANITY_MIN_SHARE, when="sanity",
               unit="share")
      for r in PHASE_E_ROWS if r.group == "sanity"),
    GateSpec("mul_mm_id_slowdown", "forced mul_mm_id / default mul_mv_id q3_K down", "guard",
             (("sweep_mul_mm_id", 1),), (("routed_down_q3_K", 1),), ">=",
             "forced mul_mm_id q3_K down is only {value:.2f}x slower than default mul_mv_id "
             "(must be at least {threshold:g}x)", threshold=MUL_MM_ID_MIN_SLOWDOWN, when="sweep"),
)


# --------------------------------------------------------------------------------------------
# Decisions (speedup = baseline us / candidate us)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparisonSpec:
    label: str
    baseline: tuple[str, ...]  # row labels, summed
    candidate: tuple[str, ...]


@dataclass(frozen=True)
class QualitySpec:
    """Quality evidence for a quant recipe: rows of kind "quality" whose variant label (or
    source file name) is `baseline` / `candidate`; overridable from the CLI."""

    baseline: str
    candidate: str
    max_ppl_increase: float  # relative: candidate PPL / baseline PPL - 1
    max_kld_mean: float  # mean KL divergence of the candidate vs the baseline logits


MIN_SAMPLES = 3  # the default of `Rules.min_samples` (decision rules file: sample_policy)
ALPHA_ONE_SIDED = 0.025  # the lower end of a 95% two-sided interval
DEFAULT_MAX_PPL_INCREASE = 0.01
DEFAULT_MAX_KLD_MEAN = 0.01

Q2_QUALITY = QualitySpec("q3-k-routed-down", "q2-k-routed-down", DEFAULT_MAX_PPL_INCREASE,
                         DEFAULT_MAX_KLD_MEAN)

_RULE_COMMON = (
    "speedup = median baseline us / median candidate us per comparison, 95% seeded bootstrap "
    "interval; inconclusive if any side has fewer than {min_samples} samples; reject if parity "
    "failed for a row involved or a 95% interval lies wholly below 1.0; "
)


@dataclass(frozen=True)
class DecisionSpec:
    policy: str
    title: str
    phase: Literal["E", "D", "user"]
    kind: DecisionKind
    comparisons: tuple[ComparisonSpec, ...]
    rule: str
    threshold: float | None = None
    threshold_env: str | None = None
    value: str | None = None  # the policy value under decision (`compact-flash`, `dense`)
    quality: QualitySpec | None = None
    review_message: str | None = None  # tripwires: what to tell a human
    parity_required: bool = True  # user decisions may promote without test-mode parity

    def default_threshold(self) -> float:
        if self.threshold_env is not None and self.threshold_env in ENV_BY_NAME:
            return float(ENV_BY_NAME[self.threshold_env].default)
        assert self.threshold is not None  # a user decision's env var defaults to it
        return self.threshold

    def rows(self) -> tuple[str, ...]:
        seen: dict[str, None] = {}
        for c in self.comparisons:
            for lbl in c.baseline + c.candidate:
                seen.setdefault(lbl, None)
        return tuple(seen)


_TRIPWIRE_RULE = _RULE_COMMON + (
    "review tripwire in the gate; the decision promotes when parity passed and the "
    "Holm-adjusted one-sided bootstrap test shows speedup above {threshold:g} ({env}), its "
    "reason carrying '{review}'; a point estimate above the threshold also asks for that "
    "review; needs-parity when only parity is missing; otherwise keep-evidence-gated.")
_PROMOTE_RULE = _RULE_COMMON + (
    "promote when parity passed for every row involved and the Holm-adjusted one-sided "
    "bootstrap test shows speedup above {threshold:g}{env_suffix} for every comparison{quality}; "
    "needs-parity / needs-quality when only that evidence is missing; otherwise "
    "keep-evidence-gated.")

DECISIONS: tuple[DecisionSpec, ...] = (
    DecisionSpec(
        "moe_merged_shared_gate_up", "merged shared-expert gate/up", "E", "review-tripwire",
        (ComparisonSpec("combined FFN q3_K down: merged vs separate shared gate/up",
                        ("ffn_q3_down",), ("ffn_q3_down_merged_shexp",)),),
        _TRIPWIRE_RULE, threshold_env=MERGED_SHEXP_REVIEW_SPEEDUP,
        review_message="revisit disabled merged shared-expert policy"),
    DecisionSpec(
        "moe_weighted_down", "weighted routed down", "E", "review-tripwire",
        (ComparisonSpec("combined FFN q2_K down: weighted vs unweighted",
                        ("ffn_q2_down",), ("ffn_q2_down_weighted",)),),
        _TRIPWIRE_RULE, threshold_env=Q2_WEIGHTED_REVIEW_SPEEDUP,
        review_message="revisit q2 unweighted policy"),
    DecisionSpec(
        "q2_K_routed_down", "q2_K routed down (quant recipe)", "E", "quant-recipe",
        (ComparisonSpec("combined FFN: q2_K vs q3_K routed down",
                        ("ffn_q3_down",), ("ffn_q2_down",)),),
        _PROMOTE_RULE, threshold_env=Q2_FFN_MIN_SPEEDUP,
        quality=Q2_QUALITY),
    DecisionSpec(
        "selected_row_flash", "selected-row fused flash", "D", "experimental",
        (ComparisonSpec("compact gather + flash vs selected-row flash (kv=1024 top_k=768)",
                        ("d_compact_gather", "d_compact_flash_kv768"),
                        ("d_selected_row_flash_kv1024_top768",)),),
        _PROMOTE_RULE, threshold=1.0),
    DecisionSpec(
        "decode", "decode phase default", "D", "phase-default",
        (*(ComparisonSpec(f"direct sparse vs selected-row flash kv={kv} top_k={t}",
                          (f"d_direct_sparse_kv{kv}_top{t}",),
                          (f"d_selected_row_flash_kv{kv}_top{t}",)) for kv, t in DECODE_SHAPES),
         ComparisonSpec("dense masked flash vs selected-row flash kv=257 top_k=64",
                        ("d_dense_flash_kv257_nb1",), ("d_selected_row_flash_kv257_top64",))),
        _PROMOTE_RULE, threshold=1.0, value="compact-flash"),
    DecisionSpec(
        "short_prefill", "short prefill phase default", "D", "phase-default",
        tuple(ComparisonSpec(f"direct sparse vs dense masked flash kv=257 batch={b}",
                             (f"d_direct_sparse_kv257_b{b}",), (f"d_dense_flash_kv257_nb{b}",))
              for b in SHORT_BATCHES),
        _PROMOTE_RULE, threshold=1.0, value="dense"),
)


@dataclass(frozen=True)
class Rules:
    """The tables one evaluation uses (tests build variants; the CLI uses `RULES`)."""

    rows: tuple[RowSpec, ...] = ALL_ROWS
    dispatch_checks: tuple[DispatchCheckSpec, ...] = DISPATCH_CHECKS
    gates: tuple[GateSpec, ...] = GATES
    decisions: tuple[DecisionSpec, ...] = DECISIONS
    estimate_terms: Terms = ESTIMATE_TERMS
    estimate_shares: Mapping[str, tuple[str, ...]] = field(
        default_factory=lambda: dict(ESTIMATE_SHARES))
    shared_expert_row: str = SHARED_EXPERT_ROW
    mesh: MeshRules = field(default_factory=lambda: _mesh_rules())  # defined below
    # The one minimum-sample policy: Phase E/D decisions need this many samples on each side,
    # A/B metrics at least this many rounds (and the test's own k). A decision rules file's
    # `[sample_policy] min_samples` sets it.
    min_samples: int = MIN_SAMPLES

    def row(self, label: str) -> RowSpec:
        for r in self.rows:
            if r.label == label:
                return r
        raise KeyError(label)

    def required(self, kernel_sweep: bool) -> tuple[str, ...]:
        labels = [r.label for r in self.rows if r.requirement == "always"]
        if kernel_sweep:
            labels += [r.label for r in self.rows if r.requirement == "sweep"]
            labels += [d.label for d in self.dispatch_checks]
        return tuple(labels)

    def title(self, label: str) -> str:
        for r in self.rows:
            if r.label == label:
                return r.title
        for d in self.dispatch_checks:
            if d.label == label:
                return d.title
        return label



# --------------------------------------------------------------------------------------------
# mesh-llm evidence rules (bench-formats spec sections 7-9): history regressions, A/B
# comparisons, KV-cache dtype defaults, the competitive promotion candidate. The code in
# `history.py`, `ab.py`, `kv_dtype.py` and `promotion.py` only interprets these tables.
# --------------------------------------------------------------------------------------------

Direction = Literal["higher", "lower"]  # which way is better


@dataclass(frozen=True)
class HistoryMetricRule:
    """mesh-llm's regression rule for one history metric: regressed when the relative change
    against the baseline median is past `limit` (in the worse direction) AND the absolute
    change is past max(`mad_factor` x MAD, `floor` x median)."""

    metric: str
    better: Direction
    limit: float
    mad_factor: float = 3.0
    floor: float = 0.01


@dataclass(frozen=True)
class HistoryRule:
    metrics: tuple[HistoryMetricRule, ...]
    min_baseline: int = 3
    classes: tuple[str, ...] = ("correctness-failure", "insufficient-baseline",
                                "performance-regression", "pass")


HISTORY_RULE = HistoryRule((
    HistoryMetricRule("output_tokens_per_second", "higher", 0.05),
    HistoryMetricRule("ttft_ms_mean", "lower", 0.10),
))


@dataclass(frozen=True)
class ABRule:
    """A/B comparison verdicts from the paired per-round deltas (new vs old, in %; see
    `ab.py` and `paired.py`): per metric an exact (Monte Carlo above `exact_max_rounds`)
    sign-flip permutation test, Holm across every metric of every comparison of a report;
    `undecided` below the minimum rounds k (the larger of the report's `min_samples` and the
    test's own k at `alpha`), `no-practical-change` when a significant effect is smaller than
    `min_effect_percent` (or the median's interval lies wholly inside it), `promote` /
    `reject` when significant and at least that large, else `inconclusive`. The comparison
    follows its `primary` metric; any metric rejected rejects it."""

    directions: Mapping[str, Direction]
    primary: str = "output_tokens_per_second"
    alpha: float = 0.05
    sides: Literal[1, 2] = 2
    min_effect_percent: float = 1.0
    min_effect_by_metric: Mapping[str, float] = field(default_factory=dict)
    exact_max_rounds: int = 20
    resamples: int = 20_000

    def min_effect(self, metric: str) -> float:
        return self.min_effect_by_metric.get(metric, self.min_effect_percent)


AB_RULE = ABRule({
    "output_tokens_per_second": "higher", "total_tokens_per_second": "higher",
    "generated_tokens_per_second": "higher", "ttft_ms_p50": "lower", "ttft_ms_p95": "lower",
    "ttft_ms_mean": "lower", "prefill_elapsed_ms_p95": "lower", "makespan_ms": "lower",
})


@dataclass(frozen=True)
class KvDtypeRule:
    """A quantised KV-cache dtype as a package's publisher default (a rule of ours: mesh-llm
    applies a declared KV dtype without evidence): promote only with a significant throughput
    or memory gain over `baseline` (Holm across the family) AND a perplexity ratio against
    `baseline` whose upper 95% bound is at most `max_ppl_ratio`. A ratio above -> reject; no
    perplexity run -> inconclusive (never promote)."""

    candidates: tuple[str, ...] = ("q8_0", "q4_0")
    baseline: str = "f16"
    max_ppl_ratio: float = 1.01
    gain_metrics: Mapping[str, Direction] = field(default_factory=lambda: {
        "sample_ts": "higher", "generated_tokens_per_second": "higher",
        "output_tokens_per_second": "higher", "total_tokens_per_second": "higher",
        "kv_cache_bytes": "lower", "memory_bytes": "lower"})
    cache_keys: tuple[str, ...] = ("type_k", "type_v", "cache_type_k", "cache_type_v")


KV_DTYPE_RULE = KvDtypeRule()


@dataclass(frozen=True)
class PromotionRule:
    """mesh-llm's promotion.json: eligible = full roster, c1 parity, both mean % gains over
    `mesh` > 0; best sum wins. A winner is a candidate: meshcert promotes an arm only with a
    promoting A/B decision for it; otherwise `inconclusive`."""

    gain_fields: tuple[str, ...] = ("synthetic_mean_percent", "thoughtworks_mean_percent")


PROMOTION_RULE = PromotionRule()


@dataclass(frozen=True)
class MeshRules:
    history: HistoryRule = HISTORY_RULE
    ab: ABRule = AB_RULE
    kv_dtype: KvDtypeRule = KV_DTYPE_RULE
    promotion: PromotionRule = PROMOTION_RULE


MESH_RULES = MeshRules()


def _mesh_rules() -> MeshRules:
    return MESH_RULES

RULES = Rules()
