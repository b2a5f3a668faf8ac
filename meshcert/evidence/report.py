"""decisions.json: the evidence report models.

The JSON Schema in `docs/evidence.schema.json` is generated from these models
(`python3 scripts/generate.py evidence-schema`); a test fails when it drifts.
Consumers: `meshcert models certify --evidence` reads `decisions[].policy` / `.verdict`; the HTML
renderer reads everything else. Changes are additive within a schema version.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION: Literal[2] = 2  # 2: mesh-llm rows, history classes, A/B, KV dtype, promotion

Verdict = Literal["promote", "reject", "inconclusive", "needs-parity", "needs-quality",
                  "keep-evidence-gated"]
VERDICTS: tuple[str, ...] = ("promote", "reject", "inconclusive", "needs-parity",
                             "needs-quality", "keep-evidence-gated")
GateStatus = Literal["passed", "failed", "missing", "skipped"]
RowStatus = Literal["present", "missing", "not supported"]
SettingSource = Literal["default", "env", "flag"]
ThresholdSource = Literal["default", "env", "flag", "fixed"]
SampleSource = Literal["perf", "perf_sample", "mixed", "none"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SourceRef(_Model):
    file: str
    line: int | None = None


class ToolInfo(_Model):
    name: str = "meshcert"
    version: str


class SettingValue(_Model):
    name: str
    value: float
    text: str = Field(description="The text the value was parsed from.")
    default: str
    source: SettingSource
    meaning: str


class QualityLimits(_Model):
    baseline: str = Field(description="Variant label or file name of the baseline quality run.")
    candidate: str = Field(description="Variant label or file name of the candidate run.")
    max_ppl_increase: float = Field(description="Largest allowed candidate PPL / baseline PPL "
                                                "- 1.")
    max_kld_mean: float = Field(description="Largest allowed mean KL divergence.")


class StatsMethod(_Model):
    name: Literal["bootstrap-median-ratio"] = "bootstrap-median-ratio"
    description: str
    confidence: float
    replicates: int
    seed: int
    min_samples: int
    alpha_one_sided: float
    multiple_comparisons: str
    sample_rule: str


class InputFile(_Model):
    path: str
    formats: list[str] = Field(default_factory=list)
    rows: int
    kinds: dict[str, int] = Field(default_factory=dict)
    run_ids: list[str] = Field(default_factory=list)
    variants: list[str] = Field(default_factory=list)
    backends: list[str] = Field(default_factory=list)
    devices: list[str] = Field(default_factory=list)
    build_commits: list[str] = Field(default_factory=list)
    sha256: str | None = None
    lines: int | None = None


class BackendInfo(_Model):
    name: str | None
    perf_samples: int
    evaluated: bool


class Inputs(_Model):
    files: list[InputFile] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list,
                                description="What ingestion could not use, with file:line.")
    label: str | None = None
    backend: str | None = Field(default=None, description="The backend the rules evaluated.")
    backends: list[BackendInfo] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class RowStats(_Model):
    """The samples of one (backend, op, params, variant)."""

    labels: list[str] = Field(default_factory=list, description="Rule rows it satisfies.")
    backend: str | None
    op: str
    params: str
    variant: str
    n: int
    median_us: float | None = None
    q1_us: float | None = None
    q3_us: float | None = None
    iqr_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    mean_us: float | None = None
    sample_source: SampleSource
    runs: list[str] = Field(default_factory=list)
    unsupported_rows: int = 0
    sources: list[SourceRef] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


class ComponentRow(_Model):
    """A row of the rules and what the table holds for it."""

    label: str
    title: str
    phase: Literal["E", "E-sweep", "D", "user"]
    group: str
    variant: str
    pattern: str = Field(description="OP(required params): a subset of the real row's params.")
    required: bool = Field(description="Required by the Phase E gate under these settings.")
    status: RowStatus
    params: str | None = None
    n: int = 0
    median_us: float | None = None
    iqr_us: float | None = None
    min_us: float | None = None
    max_us: float | None = None
    ambiguous: list[str] = Field(default_factory=list,
                                 description="Other matching params (the first match is used).")
    sources: list[SourceRef] = Field(default_factory=list)
    note: str = ""


class EstimateTerm(_Model):
    label: str
    title: str
    coefficient: float
    median_us: float
    contribution_us: float
    share: float


class Estimate(_Model):
    """Routed FFN decode = route + 2 x gate/up(q2_K) + fused SwiGLU + down(q3_K) + weighted
    sum (1 token), from row medians."""

    total_us: float
    terms: list[EstimateTerm]
    share_us: dict[str, float] = Field(description="matmuls, SwiGLU, route+sum (us).")
    shares: dict[str, float] = Field(description="The same as fractions of the total.")
    shared_expert_us: float | None = None
    routed_plus_shared_us: float | None = None
    shared_expert_share: float | None = Field(
        default=None, description="Shared expert / (routed + shared).")


class GateCheck(_Model):
    name: str
    title: str
    kind: Literal["promotion", "review-tripwire", "guard", "dispatch"]
    status: GateStatus
    value: float | None = None
    threshold: float | None = None
    comparator: str | None = Field(default=None, description="Passes when value <comparator> "
                                                     "threshold.")
    unit: Literal["ratio", "share", "check"] = "ratio"
    threshold_env: str | None = None
    threshold_source: ThresholdSource | None = None
    rows: list[str] = Field(default_factory=list)
    message: str
    error: str | None = Field(default=None, description="The `error: ...` line when it failed.")


class MissingRow(_Model):
    label: str
    title: str
    pattern: str


GateState = Literal["passed", "failed", "incomplete", "not-applicable"]


class GateResult(_Model):
    applies: bool = Field(default=True, description="The evidence holds a row the gate reads, "
                          "or the gate was asked for (GLM52_PHASE_E_REQUIRE_GATES, "
                          "--phase-e). When false every check is skipped and the gate is out of "
                          "the headline.")
    applicability: str = Field(default="", description="Why the gate applies, or why not.")
    passed: bool = Field(description="Applies, no missing required row and no failed gate.")
    enforced: bool = Field(description="GLM52_PHASE_E_REQUIRE_GATES / --require-gates: a "
                                       "failure exits 2.")
    kernel_sweep: bool
    sanity: bool
    required_rows: list[str]
    missing_rows: list[MissingRow] = Field(default_factory=list)
    checks: list[GateCheck] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list,
                              description="`error: ...` lines, missing rows first.")
    estimate: Estimate | None = None
    estimate_message: str | None = None

    @property
    def state(self) -> GateState:
        """passed; failed when a hard gate failed; incomplete when only rows are missing;
        not-applicable."""
        if not self.applies:
            return "not-applicable"
        if self.passed:
            return "passed"
        if any(c.status == "failed" for c in self.checks):
            return "failed"
        return "incomplete"


class RowRef(_Model):
    label: str
    title: str
    status: RowStatus
    backend: str | None = None
    op: str
    params: str | None = None
    variant: str
    n: int = 0
    median_us: float | None = None
    sources: list[SourceRef] = Field(default_factory=list)


class Comparison(_Model):
    label: str
    baseline: list[RowRef]
    candidate: list[RowRef]
    n_baseline: int = Field(description="Samples on the baseline side (fewest of its rows).")
    n_candidate: int
    baseline_us: float | None = None
    candidate_us: float | None = None
    speedup: float | None = Field(default=None, description="baseline us / candidate us (medians).")
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float = 0.95
    p_value: float | None = Field(default=None, description="One-sided bootstrap p of speedup <= "
                                                    "threshold.")
    lower_bound_adjusted: float | None = Field(
        default=None, description="One-sided lower bound at the decision's Holm level.")
    seed: int | None = None
    significantly_slower: bool = False
    clears_threshold: bool = False


class ParityCase(_Model):
    label: str
    backend: str | None = None
    op: str
    params: str
    variant: str
    passed: bool | None
    nmse: float | None = None
    error: str | None = None
    source: SourceRef


class ParityEvidence(_Model):
    status: Literal["passed", "failed", "missing", "partial"]
    cases: list[ParityCase] = Field(default_factory=list)
    missing_rows: list[str] = Field(default_factory=list,
                                    description="Rows involved without a parity case.")


class QualityEvidence(_Model):
    status: Literal["passed", "failed", "missing"]
    baseline: str
    candidate: str
    baseline_ppl: float | None = None
    baseline_ppl_err: float | None = None
    candidate_ppl: float | None = None
    candidate_ppl_err: float | None = None
    ppl_increase: float | None = Field(default=None,
                                       description="Candidate PPL / baseline PPL - 1.")
    ppl_increase_method: str | None = None
    max_ppl_increase: float
    kld_mean: float | None = None
    kld_mean_err: float | None = None
    max_kld_mean: float
    same_top_p_percent: float | None = None
    sources: list[SourceRef] = Field(default_factory=list)
    missing: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)


class HolmInfo(_Model):
    p_value: float = Field(description="The decision's p: the largest of its comparisons'.")
    p_adjusted: float
    rank: int
    m: int = Field(description="Decisions in the family (those with enough samples).")
    level: float = Field(description="alpha / (m - rank + 1).")
    alpha: float


class Decision(_Model):
    policy: str
    title: str
    phase: Literal["E", "D", "user"]
    kind: Literal["review-tripwire", "quant-recipe", "experimental", "phase-default"]
    value: str | None = Field(default=None, description="The policy value decided on, if any.")
    verdict: Verdict
    reason: str
    rule: str = Field(description="The rule, fixed in the decision rules before the data was read.")
    threshold: float
    threshold_env: str | None = None
    threshold_source: ThresholdSource
    min_samples: int
    comparisons: list[Comparison]
    parity: ParityEvidence
    quality: QualityEvidence | None = None
    holm: HolmInfo | None = None
    missing_evidence: list[str] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)
    review_required: bool = False
    sources: list[SourceRef] = Field(default_factory=list)


class OmittedDecision(_Model):
    policy: str
    reason: str


class PackageLayerCheck(_Model):
    layer: int
    tensor: str
    artifact: str
    ggml_type: str
    original_type: str | None = None
    status: Literal["passed", "failed", "unknown"]
    message: str


class PackageCheck(_Model):
    rule: str
    package: str
    status: Literal["passed", "failed", "not-applicable", "unknown"]
    recipe_applied: bool | None = None
    nextn_layers: list[int] = Field(default_factory=list)
    layers: list[PackageLayerCheck] = Field(default_factory=list)
    messages: list[str] = Field(default_factory=list)


class MeshMetricRow(_Model):
    """The values of one numeric field of one mesh-llm setup (bench-formats spec section 11)."""

    format: str
    op: str
    params: str = Field(description="The setup key: rows of different setups never pool.")
    metric: str = Field(description="The producer's field name.")
    unit: str
    n: int
    median: float
    min: float
    max: float
    sources: list[str] = Field(default_factory=list,
                               description="file:line#/json/pointer of each value.")


HistoryClass = Literal["correctness-failure", "insufficient-baseline", "performance-regression",
                       "pass"]
IntervalSays = Literal["regression", "within-noise", "no-regression", "no-interval"]


class HistoryMetricVerdict(_Model):
    metric: str
    better: Literal["higher", "lower"]
    current: float | None = None
    baseline_median: float | None = None
    baseline_mad: float | None = None
    change: float | None = Field(None, description="current / baseline median - 1.")
    limit: float = Field(description="mesh-llm's relative limit (0.05 = 5%).")
    noise_floor: float | None = Field(None, description="max(3 x MAD, 1% of the median).")
    regressed: bool = False
    change_low: float | None = Field(None, description="95% bootstrap interval of the change "
                                     "(baseline resampled), low end.")
    change_high: float | None = None
    interval_says: IntervalSays = "no-interval"


class HistoryPointOut(_Model):
    line: int
    source_sha: str
    created_utc: str
    complete: bool
    values: dict[str, float | None] = Field(default_factory=dict)


class HistoryVerdict(_Model):
    cohort_key: str
    setup: dict[str, str] = Field(default_factory=dict)
    file: str
    line: int = Field(description="Line of the current (latest) row.")
    source_sha: str
    created_utc: str
    history_class: HistoryClass
    baseline_n: int
    rows: int
    metrics: list[HistoryMetricVerdict] = Field(default_factory=list)
    points: list[HistoryPointOut] = Field(default_factory=list,
                                          description="The series (latest 200) for the plot.")


ABVerdict = Literal["promote", "reject", "inconclusive"]


ABDecisionVerdict = Literal["promote", "reject", "inconclusive", "undecided",
                           "no-practical-change"]


def _opt(description: str) -> Any:
    return Field(default=None, description=description)


class ABMetricDecision(_Model):
    """One metric of an A/B comparison, tested on its paired round deltas (docs/evidence.md,
    "How an A/B decision is made")."""

    metric: str
    better: Literal["higher", "lower"] | None = None
    median: float = Field(description="The median effect (%): of the round deltas when there "
                          "are any, else the producer's median.")
    producer_median: float | None = _opt("The producer's own median (%).")
    rounds: int = Field(description="n: the round deltas tested.")
    min_rounds: int | None = _opt("k: the fewest rounds at which the test can reach alpha "
                                  "after Holm (and the sample policy's minimum).")
    ci95: list[float] | None = _opt("The producer's paired interval (%): reported, never a "
                                    "test.")
    interval_low: float | None = _opt("Interval of the median effect (%), low end.")
    interval_high: float | None = _opt("Interval of the median effect (%), high end.")
    interval_coverage: float | None = _opt("The interval's own coverage.")
    interval_method: str | None = _opt("How the interval was made.")
    ci_low_adjusted: float | None = _opt("Not filled since the exact test (the bootstrap "
                                         "interval it held could not leave [min, max]); see "
                                         "interval_low.")
    ci_high_adjusted: float | None = _opt("See ci_low_adjusted.")
    test: str | None = _opt("The test that gave p_value, as run.")
    p_value: float | None = _opt("The test's p, before Holm.")
    p_adjusted: float | None = _opt("Holm-adjusted over every tested metric of every "
                                    "comparison of the report.")
    holm_m: int | None = _opt("m: tests in the Holm family.")
    mde_percent: float | None = _opt("Minimum detectable effect at n (%): 80% power at "
                                     "alpha / m, normal approximation.")
    min_effect_percent: float | None = _opt("The practical effect (%) below which a "
                                            "significant change is no practical change.")
    verdict: ABDecisionVerdict
    reason: str = ""
    pointer: str


class SetupDifference(_Model):
    field: str = Field(description="Dotted path of a setup field that differs between sides.")
    old: str | None = None
    new: str | None = None


class ABDecision(_Model):
    comparison: str = Field(description="The short subject: what differs between the sides "
                            "(one line).")
    file: str
    old: str | None = Field(default=None, description="The old side's whole setup, as recorded.")
    new: str | None = None
    differences: list[SetupDifference] = Field(default_factory=list)
    verdict: ABDecisionVerdict
    reason: str
    metrics: list[ABMetricDecision] = Field(default_factory=list)


class KvDtypeDecision(_Model):
    dtype: str
    baseline: str
    verdict: ABVerdict
    reason: str
    gain_metric: str | None = None
    gain_setup: str | None = None
    gain: float | None = Field(None, description="candidate over baseline (>1 = better).")
    gain_ci: list[float] | None = None
    p_value: float | None = None
    p_adjusted: float | None = None
    ppl_ratio: float | None = None
    ppl_ratio_upper: float | None = None
    max_ppl_ratio: float
    sources: list[str] = Field(default_factory=list)


class PromotionCheck(_Model):
    platform: str | None
    model: str | None
    file: str
    mesh_llm_winner: str | None
    meshcert_candidate: str | None = Field(description="Best eligible arm by mesh-llm's rule, "
                                           "recomputed.")
    meshcert_verdict: ABVerdict
    agree: bool
    notes: list[str] = Field(default_factory=list)


OverallStatus = Literal["passed", "failed", "incomplete"]
Outcome = Literal["passed", "failed", "undecided"]
HeadlineKind = Literal["phase-e-gate", "decision", "ab", "kv-dtype", "history", "promotion",
                       "package"]


class HeadlineItem(_Model):
    """One decision the evidence supports, with its own verdict."""

    kind: HeadlineKind
    subject: str = Field(description="What was decided, e.g. `A/B v0.78.0 -> v0.79.0`.")
    verdict: str = Field(description="The decision's own verdict (promote, reject, pass, "
                         "performance-regression, failed, ...).")
    outcome: Outcome = Field(description="passed: decided, nothing against; failed: the "
                             "evidence says no (reject, regression, failed gate or rule); "
                             "undecided: not enough evidence to say.")
    reason: str = ""
    where: str | None = Field(default=None, description="file:line of the evidence, if one.")


class Headline(_Model):
    """What the evidence decides: every format (console, decisions.json, HTML, Markdown,
    JUnit, SARIF) states this `status`."""

    status: OverallStatus = Field(description="failed when an item failed; else incomplete "
                                  "when one is undecided or there is none; else passed.")
    summary: str
    phase_e: str = Field(description="`applies: <why>` or `not applicable: <why>`.")
    items: list[HeadlineItem] = Field(default_factory=list)


class EvidenceReport(_Model):
    schema_version: Literal[1, 2] = SCHEMA_VERSION
    tool: ToolInfo
    generated_at: str | None = None
    settings: list[SettingValue]
    quality_limits: QualityLimits
    method: StatsMethod
    inputs: Inputs
    rows: list[RowStats] = Field(default_factory=list)
    components: list[ComponentRow] = Field(default_factory=list)
    estimate: Estimate | None = None
    estimate_message: str | None = None
    gate: GateResult
    decisions: list[Decision] = Field(default_factory=list)
    omitted_decisions: list[OmittedDecision] = Field(default_factory=list)
    package_check: PackageCheck | None = None
    notes: list[str] = Field(default_factory=list)
    mesh_rows: list[MeshMetricRow] = Field(default_factory=list)
    history: list[HistoryVerdict] = Field(default_factory=list)
    ab_decisions: list[ABDecision] = Field(default_factory=list)
    kv_dtype_decisions: list[KvDtypeDecision] = Field(default_factory=list)
    promotion_checks: list[PromotionCheck] = Field(default_factory=list)
    headline: Headline | None = Field(default=None, description="The decisions the evidence "
                                      "supports and the overall verdict (always written).")

    def to_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def evidence_json_schema() -> dict[str, object]:
    return EvidenceReport.model_json_schema()


def schema_text() -> str:
    return json.dumps(evidence_json_schema(), indent=2, sort_keys=True) + "\n"
