"""A/B comparison decisions (bench-formats spec section 9) by `rules.AB_RULE`.

Per metric of `paired_delta_percent` (new vs old, %), from its round deltas (the statistics are
in `paired.py`; docs/evidence.md "How an A/B decision is made" is the reviewer's version):

1. deltas that are not all finite numbers: `undecided`, the reason names the file and field;
2. the Holm family is every metric of every comparison of the report that has round deltas
   and a direction (m of them); k = max(the sample policy's `min_samples`, the test's own k:
   the smallest n with sides * m / 2^n <= alpha). n < k: `undecided (insufficient rounds: n < k)`;
3. otherwise the sign-flip permutation test (exact up to 20 rounds, seeded Monte Carlo above)
   gives p; Holm adjusts it over the family. Significant (adjusted p < alpha): an effect whose
   median is at least the metric's minimum practical effect is `promote` (better side) or
   `reject` (worse); a smaller one is `no-practical-change`; a median on the other side of 0
   from the mean (the tested statistic: a few large rounds one way, most rounds the other)
   is `inconclusive`, never promoted or rejected the way the median points. Not significant:
   `no-practical-change` when the median's interval lies wholly inside +-the minimum effect,
   else `inconclusive`;
4. a metric with only the producer's ci95 (no round deltas) is `undecided`: its interval is
   reported, never tested, so it never promotes (or rejects) on its own.
A metric with no known direction (neither the rule nor its unit says) is reported, not decided.
A comparison follows its primary metric; any metric that rejects rejects it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from meshcert.evidence.ab_subject import subject
from meshcert.evidence.defaults import DEFAULT_SEED
from meshcert.evidence.paired import (
    SignFlipResult,
    median_interval,
    min_detectable_effect,
    min_rounds,
    sign_flip_test,
)
from meshcert.evidence.parsers.mesh_json import unit_of
from meshcert.evidence.report import ABDecision, ABDecisionVerdict, ABMetricDecision
from meshcert.evidence.rules import AB_RULE, MIN_SAMPLES, ABRule, Direction
from meshcert.evidence.stats import HolmResult, comparison_seed, holm


def direction(metric: str, rule: ABRule = AB_RULE) -> Direction | None:
    """Which way is better for a metric: the rule's table, else what its unit says (tok/s up;
    a duration in ms down); None when neither knows (never decided)."""
    known = rule.directions.get(metric)
    if known is not None:
        return known
    unit = unit_of(metric)
    return "higher" if unit == "tok/s" else "lower" if unit == "ms" else None


@dataclass
class _Metric:
    """One metric before Holm: its record, deltas and what is wrong with them."""

    name: str  # file|params|metric: the Holm family key and the Monte Carlo seed's name
    rec: Mapping[str, Any]
    deltas: np.ndarray
    better: Direction | None
    problem: str | None = None

    @property
    def metric(self) -> str:
        return str(self.rec.get("metric"))

    @property
    def pointer(self) -> str:
        return str((self.rec.get("extra") or {}).get("pointer"))


def _metric(file: str, params: str, rec: Mapping[str, Any], rule: ABRule) -> _Metric:
    metric = str(rec.get("metric"))
    raw = (rec.get("extra") or {}).get("round_deltas") or []
    name = f"{file}|{params}|{metric}"
    values = raw if isinstance(raw, list | tuple) else [raw]
    wrong = [v for v in values if not isinstance(v, int | float) or isinstance(v, bool)]
    if wrong:
        return _Metric(name, rec, np.empty(0), direction(metric, rule),
                       f"{file}: {_field(rec)}/round_deltas holds {wrong[0]!r}, not a number: "
                       "not used")
    numbers = [float(v) for v in values]
    deltas = np.asarray(numbers, dtype=float)
    infinite = [v for v in numbers if not math.isfinite(v)]
    if infinite:
        return _Metric(name, rec, np.empty(0), direction(metric, rule),
                       f"{file}: {_field(rec)}/round_deltas holds {infinite[0]!r} (not "
                       "finite): not used")
    return _Metric(name, rec, deltas, direction(metric, rule))


def _field(rec: Mapping[str, Any]) -> str:
    pointer = str((rec.get("extra") or {}).get("pointer") or "")
    return pointer.removesuffix("/median") or f"paired_delta_percent/{rec.get('metric')}"


def _pct(value: float) -> str:
    return f"{value:+.2f}%"


def _significant(median: float, effect: float, better: Direction
                 ) -> tuple[ABDecisionVerdict, str]:
    if abs(median) < effect:
        return "no-practical-change", (f"significant, but the median {_pct(median)} is smaller "
                                       f"than the minimum practical effect {effect:g}%")
    up = median > 0
    if up == (better == "higher"):
        return "promote", f"significantly better by {_pct(median)}"
    return "reject", f"significantly worse by {_pct(median)}"


@dataclass(frozen=True)
class _Family:
    """The report's Holm family: its size m, the minimum rounds k, each test and Holm."""

    m: int
    k: int
    tests: Mapping[str, SignFlipResult]
    adjusted: Mapping[str, HolmResult]
    k_from_policy: bool = False  # the sample policy's min_samples, not the test, set k


def _decide_metric(m: _Metric, rule: ABRule, fam: _Family) -> ABMetricDecision:
    extra = m.rec.get("extra") or {}
    ci = extra.get("ci95")
    producer = float(m.rec["value"])
    n = int(m.deltas.size)
    effect = rule.min_effect(m.metric)
    k = fam.k
    d = ABMetricDecision(metric=m.metric, better=m.better, producer_median=producer,
                         median=float(np.median(m.deltas)) if n else producer, rounds=n,
                         min_rounds=k, ci95=ci, min_effect_percent=effect,
                         verdict="undecided", pointer=m.pointer)
    if m.problem is not None:
        d.reason = m.problem
        return d
    if n == 0:
        d.reason = ("no round deltas: the producer's ci95 "
                    f"{_interval_text(ci)} is reported, not tested; it never decides alone")
        return d
    iv = median_interval(m.deltas, rule.alpha)
    d.interval_low, d.interval_high = iv.low, iv.high
    d.interval_coverage, d.interval_method = iv.coverage, iv.method
    if m.better is None:
        d.reason = "no known better direction (neither the rule nor the unit says): not decided"
        return d
    d.mde_percent = min_detectable_effect(m.deltas, alpha=rule.alpha, m=fam.m,
                                          sides=rule.sides, k=k)
    if n < k:
        policy = " (sample_policy.min_samples)" if fam.k_from_policy else ""
        d.reason = f"insufficient rounds: n = {n} < k = {k}{policy}"
        return d
    h, test = fam.adjusted[m.name], fam.tests[m.name]
    d.test, d.p_value = test.test, test.p_value
    d.p_adjusted, d.holm_m = float(h.p_adjusted), fam.m
    mean = float(np.mean(m.deltas))
    if h.p_adjusted < rule.alpha and d.median * mean < 0:
        # the test is of the mean: a median on the other side is no effect in either direction
        d.verdict = "inconclusive"
        d.reason = (f"significant by the test of the mean ({_pct(mean)}), but the median "
                    f"{_pct(d.median)} points the other way: the rounds disagree")
    elif h.p_adjusted < rule.alpha:
        d.verdict, d.reason = _significant(d.median, effect, m.better)
    elif -effect < iv.low and iv.high < effect:
        d.verdict = "no-practical-change"
        d.reason = (f"not significant, and the median's interval lies wholly inside "
                    f"+-{effect:g}%")
    else:
        d.verdict = "inconclusive"
        d.reason = f"not significant (Holm p {h.p_adjusted:.4g} >= {rule.alpha:g})"
    return d


def _interval_text(ci: Any) -> str:
    if isinstance(ci, list) and len(ci) == 2:
        return f"[{ci[0]:+g}, {ci[1]:+g}]%"
    return "(none)"


def _summary(m: ABMetricDecision) -> str:
    """What every A/B decision shows: n, median effect, its interval, test, adjusted p, MDE."""
    head = f"{m.metric}: {m.verdict} ({m.reason})"
    if m.rounds == 0 or m.interval_low is None or m.interval_high is None:
        return head
    cover = f"{m.interval_coverage:.1%}" if m.interval_coverage is not None else "?"
    if m.test is None or m.p_value is None or m.p_adjusted is None:
        tested = "not tested"
    else:
        kind = "exact" if m.test.startswith("exact") else "Monte Carlo"
        tested = (f"{kind} sign-flip p {m.p_value:.4g}, Holm p {m.p_adjusted:.4g} "
                  f"(m = {m.holm_m})")
    mde = f"{m.mde_percent:.2f}%" if m.mde_percent is not None else "none below k"
    return (f"{head}; n = {m.rounds}, median {_pct(m.median)}, interval "
            f"[{_pct(m.interval_low)}, {_pct(m.interval_high)}] (sign test, {cover}); "
            f"{tested}; MDE {mde}; min effect {m.min_effect_percent:g}%")


def _comparison(file: str, recs: list[Mapping[str, Any]], metrics: list[ABMetricDecision],
                rule: ABRule) -> ABDecision:
    params_dict = recs[0].get("param_dict") or {}
    old, new = params_dict.get("old"), params_dict.get("new")
    short, diffs = subject(old, new)
    worse = [m for m in metrics if m.verdict == "reject"]
    primary = next((m for m in metrics if m.metric == rule.primary), None)
    verdict: ABDecisionVerdict
    if worse:
        verdict, reason = "reject", _summary(worse[0])
    elif primary is None:
        verdict, reason = "inconclusive", f"no paired delta of {rule.primary}"
    else:
        verdict, reason = primary.verdict, _summary(primary)
    return ABDecision(comparison=short, file=file, old=_text(old), new=_text(new),
                      differences=diffs, verdict=verdict, reason=reason, metrics=metrics)


def decide_ab(records: Iterable[Mapping[str, Any]], rule: ABRule = AB_RULE, *,
              min_samples: int = MIN_SAMPLES, seed: int = DEFAULT_SEED) -> list[ABDecision]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for rec in records:
        if rec.get("kind") == "ab_delta":
            groups.setdefault((str(rec.get("source_file")), str(rec.get("params"))), []).append(rec)
    metrics = {key: [_metric(key[0], key[1], rec, rule) for rec in recs]
               for key, recs in groups.items()}
    testable = [m for ms in metrics.values() for m in ms
                if m.problem is None and m.deltas.size and m.better is not None]
    test_k = min_rounds(rule.alpha, len(testable), rule.sides)
    k = max(min_samples, test_k)
    tests = {m.name: sign_flip_test(m.deltas, sides=rule.sides,
                                    better=1 if m.better == "higher" else -1,
                                    resamples=rule.resamples,
                                    seed=comparison_seed(seed, m.name),
                                    exact_max=rule.exact_max_rounds)
             for m in testable if m.deltas.size >= k}
    # Holm over the whole family: a metric below k counts with p = 1 (it is one of the m the
    # k was computed for, and can never be significant)
    adjusted = holm({m.name: tests[m.name].p_value if m.name in tests else 1.0
                     for m in testable}, rule.alpha)
    fam = _Family(len(testable), k, tests, adjusted, k_from_policy=min_samples > test_k)
    return [_comparison(file, groups[(file, params)],
                        [_decide_metric(m, rule, fam) for m in ms], rule)
            for (file, params), ms in metrics.items()]


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
