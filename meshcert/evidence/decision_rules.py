"""The user's decision rules, from the file `--decisions FILE` names (`meshcert evidence
report`, `evidence run`): TOML or JSON, validated by `DecisionRules` (JSON Schema:
docs/evidence-rules.schema.json, also kept under its old name evidence-catalog.schema.json;
regenerate with
`python3 scripts/generate.py decision-rules-schema`).

    schema_version = 1
    fail_on = "incomplete"                # optional: as `--fail-on` (which overrides it)

    [[decisions]]
    policy = "fused_rms_norm"
    title = "fused RMS norm + mul"
    threshold = 1.05                      # speedup = baseline us / candidate us
    threshold_env = "MYPROJ_FUSED_RMS_MIN_SPEEDUP"   # optional: the environment overrides it
    parity = true                         # promotion needs test-mode parity of every row
    [[decisions.baseline]]
    op = "RMS_NORM"
    params = { type = "f32", ne = [4096, 512, 1, 1] }
    [[decisions.candidate]]
    op = "RMS_NORM_MUL"
    params = { type = "f32", ne = [4096, 512, 1, 1] }
    [decisions.quality]                   # optional: perplexity / KL evidence by run label
    baseline = "f16"
    candidate = "q4_0"
    max_ppl_increase = 0.02
    max_kld_mean = 0.02

    [sample_policy]                       # optional: the one minimum-sample policy
    min_samples = 3                       # Phase E/D: per side; A/B: rounds (and the test's k)

    [ab]                                  # optional: how A/B comparisons are decided
    alpha = 0.05
    sides = 2
    min_effect_percent = 1.0              # a significant change below 1% is no practical change

A row selector matches like the built-in rows: same op, same variant (default `default`) and
every given param equal. Several selectors on a side are summed (like compact gather + flash).
User decisions join the built-in GLM Phase E/D rules (which stays the default) and follow its
verdict rules; a policy name may not repeat a built-in one. Errors are `DecisionRulesError` with the
file and every problem found, never a traceback.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from meshcert.evidence.errors import EvidenceError
from meshcert.evidence.rules import (
    _RULE_COMMON,
    ENV_BY_NAME,
    MIN_SAMPLES,
    RULES,
    ABRule,
    ComparisonSpec,
    DecisionSpec,
    EnvVar,
    ParamValue,
    QualitySpec,
    RowSpec,
    Rules,
)

_ENV_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
Scalar = int | float | str
Param = Scalar | list[Scalar]


class DecisionRulesError(EvidenceError):
    """A decision rules file that cannot be used; the message names the file and every problem."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RowSelector(_Strict):
    """One benchmark row: op name, required params (a subset of the row's), variant label."""

    op: Annotated[str, Field(min_length=1, pattern=r"^[A-Z][A-Za-z0-9_.\-]*$",
                             description="test-backend-ops case name, e.g. MUL_MAT")]
    params: dict[str, Param] = Field(default_factory=dict,
                                     description="params the row must have, e.g. {m = 4096}")
    variant: str = Field("default", min_length=1,
                         description="variant label (--label or a sweep file name)")
    title: str | None = Field(None, description="what a reviewer reads; default op(params)")


class QualityRequirement(_Strict):
    """Perplexity / KL-divergence evidence, found by run label (variant or file name)."""

    baseline: str = Field(min_length=1)
    candidate: str = Field(min_length=1)
    max_ppl_increase: float = Field(0.01, ge=0, description="relative: 0.01 = 1%")
    max_kld_mean: float = Field(0.01, ge=0)


class UserDecision(_Strict):
    policy: Annotated[str, Field(pattern=r"^[A-Za-z][A-Za-z0-9_]*$", max_length=64,
                                 description="name of the policy, e.g. q4_0_fused_ffn")]
    title: str = Field(min_length=1)
    baseline: list[RowSelector] = Field(min_length=1)
    candidate: list[RowSelector] = Field(min_length=1)
    threshold: float = Field(1.0, gt=0, description="promote when the speedup interval's "
                             "lower bound is above this")
    threshold_env: str | None = Field(None, description="environment variable that "
                                      "overrides the threshold (UPPER_SNAKE_CASE)")
    parity: bool = Field(True, description="promotion needs passed test-mode parity for "
                         "every row involved")
    quality: QualityRequirement | None = None

    @field_validator("threshold_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError("must be UPPER_SNAKE_CASE, e.g. MYPROJ_MIN_SPEEDUP")
        if value is not None and value in ENV_BY_NAME:
            raise ValueError(f"{value} is a built-in setting; use a name of your own")
        return value


class SamplePolicy(_Strict):
    """The one minimum-sample policy, read by the Phase E/D decisions and the A/B rules."""

    min_samples: int = Field(default=MIN_SAMPLES, ge=1, le=1000, description=(
        "Phase E/D and user decisions: samples each side needs (fewer: inconclusive). A/B "
        "comparisons: the fewest rounds (fewer: undecided); the exact test's own minimum k "
        "applies above it (alpha 0.05, two-sided, one metric: 6 rounds)"))


class ABSettings(_Strict):
    """How A/B comparisons are decided (docs/evidence.md, "How an A/B decision is made")."""

    alpha: float = Field(default=0.05, gt=0, lt=1, description="significance level of the Holm "
                         "family (every tested metric of every comparison of a report)")
    sides: Literal[1, 2] = Field(default=2, description="2: two-sided sign-flip test (promote or "
                                 "reject); 1: one-sided towards the better direction "
                                 "(promote only)")
    min_effect_percent: float = Field(default=1.0, ge=0, le=1000, description=(
        "minimum practical effect (%): a significant change whose median is smaller is "
        "`no-practical-change`; default 1% (tokens/s, latency, makespan alike)"))
    min_effect_percent_by_metric: dict[str, Annotated[float, Field(ge=0, le=1000)]] = Field(
        default_factory=dict, description="per-metric minimum effect (%), e.g. "
        "{ ttft_ms_p95 = 5.0 }")
    exact_max_rounds: int = Field(default=20, ge=1, le=24, description="up to this many rounds all "
                                  "2^n sign vectors are enumerated (2^20: ~8 MB, tens of ms)")
    monte_carlo_resamples: int = Field(default=20_000, ge=1000, le=1_000_000, description=(
        "random sign vectors above exact_max_rounds (seeded; p = (1 + hits) / (resamples + 1))"))


class DecisionRules(_Strict):
    """The user's decision rules file."""

    schema_version: Literal[1] = Field(description="format version of this file")
    sample_policy: SamplePolicy = SamplePolicy()
    ab: ABSettings = ABSettings()
    decisions: list[UserDecision] = Field(default_factory=list, description="your own "
                                          "decisions (none: only the settings above apply)")
    fail_on: Literal["failed", "incomplete"] | None = Field(
        None, description="turn the report's verdict into the exit status, as `evidence "
        "report --fail-on` (which overrides it): failed exits 1 on FAILED; incomplete also "
        "exits 3 on INCOMPLETE")


def _parse_text(path: Path, text: str) -> object:
    if path.suffix.lower() == ".json":
        return json.loads(text)
    if path.suffix.lower() == ".toml":
        return tomllib.loads(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return tomllib.loads(text)


def load_decision_rules(path: str | os.PathLike[str]) -> DecisionRules:
    """Read and validate; `DecisionRulesError` (file + every problem) for anything wrong."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DecisionRulesError(f"cannot read decision rules {p}: {exc}") from None
    try:
        data = _parse_text(p, text)
    except json.JSONDecodeError as exc:
        raise DecisionRulesError(f"decision rules {p}: not valid JSON: {exc.msg} "
                                 f"(line {exc.lineno})") from None
    except tomllib.TOMLDecodeError as exc:
        raise DecisionRulesError(f"decision rules {p}: not valid TOML: {exc}") from None
    try:
        parsed = DecisionRules.model_validate(data)
    except ValidationError as exc:
        from meshcert.core.validation import problems

        raise DecisionRulesError(f"decision rules {p}: {problems(exc)}") from None
    builtin = {d.policy for d in RULES.decisions}
    seen: set[str] = set()
    for d in parsed.decisions:
        if d.policy in builtin:
            raise DecisionRulesError(f"decision rules {p}: decisions.{d.policy}: the policy name "
                                     "is a built-in decision; choose another")
        if d.policy in seen:
            raise DecisionRulesError(f"decision rules {p}: decisions.{d.policy}: policy given "
                                     "twice")
        seen.add(d.policy)
    return parsed


def _value(v: Param) -> ParamValue:
    return tuple(v) if isinstance(v, list) else v


def _row(policy: str, side: str, i: int, sel: RowSelector) -> RowSpec:
    params = {k: _value(v) for k, v in sel.params.items()}
    spec = RowSpec(f"{policy}.{side}.{i}", sel.title or "", "user", sel.op, params, "never",
                   sel.variant, group=f"user: {policy}")
    return spec if sel.title else replace(spec, title=spec.pattern.replace(",", " "))


_USER_RULE = _RULE_COMMON + (
    "promote when <parity>the Holm-adjusted one-sided bootstrap test shows speedup "
    "above {threshold:g}{env_suffix} for every comparison{quality}; needs-parity / "
    "needs-quality when only that evidence is missing; otherwise keep-evidence-gated. "
    "(user decision rules)")


def to_rules(user: DecisionRules, base: Rules = RULES) -> Rules:
    """The built-in rules plus the user's rows and decisions."""
    rows: list[RowSpec] = []
    decisions: list[DecisionSpec] = []
    for d in user.decisions:
        base_rows = [_row(d.policy, "baseline", i, s) for i, s in enumerate(d.baseline, 1)]
        cand_rows = [_row(d.policy, "candidate", i, s) for i, s in enumerate(d.candidate, 1)]
        rows += base_rows + cand_rows
        quality = (QualitySpec(d.quality.baseline, d.quality.candidate,
                               d.quality.max_ppl_increase, d.quality.max_kld_mean)
                   if d.quality else None)
        rule = _USER_RULE.replace("<parity>", "parity passed for every row involved and "
                                  if d.parity else "")
        decisions.append(DecisionSpec(
            d.policy, d.title, "user", "quant-recipe" if quality else "experimental",
            (ComparisonSpec(f"{d.title}: candidate vs baseline",
                            tuple(r.label for r in base_rows),
                            tuple(r.label for r in cand_rows)),),
            rule, threshold=d.threshold, threshold_env=d.threshold_env, quality=quality,
            parity_required=d.parity))
    ab = _ab_rule(user.ab, base.mesh.ab)
    return replace(base, rows=base.rows + tuple(rows), decisions=base.decisions + tuple(decisions),
                   min_samples=user.sample_policy.min_samples,
                   mesh=replace(base.mesh, ab=ab))


def _ab_rule(settings: ABSettings, base: ABRule) -> ABRule:
    return replace(base, alpha=settings.alpha, sides=settings.sides,
                   min_effect_percent=settings.min_effect_percent,
                   min_effect_by_metric=dict(settings.min_effect_percent_by_metric),
                   exact_max_rounds=settings.exact_max_rounds,
                   resamples=settings.monte_carlo_resamples)


def env_vars(user: DecisionRules) -> tuple[EnvVar, ...]:
    """The threshold variables the user's decisions read (default: their threshold)."""
    return tuple(EnvVar(d.threshold_env, repr(d.threshold), "ratio",
                        f"threshold of the user decision {d.policy}")
                 for d in user.decisions if d.threshold_env)


def load_user_rules(path: str | os.PathLike[str]) -> tuple[Rules, tuple[EnvVar, ...]]:
    user = load_decision_rules(path)
    return to_rules(user), env_vars(user)


def schema_json(indent: int = 2) -> str:
    return json.dumps(DecisionRules.model_json_schema(), indent=indent) + "\n"
