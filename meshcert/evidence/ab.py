"""A/B comparison decisions (bench-formats spec section 9) by `rules.AB_RULE`.

Per metric of `paired_delta_percent` (new vs old, %): the round deltas' median is bootstrapped
(seeded, `stats`); its two-sided p of "no change" joins one Holm family with every other metric
of every comparison in the report. `promote` when the Holm-adjusted p is below 0.05 and the
interval is wholly on the better side (tok/s up; ttft, prefill, makespan down; a metric
the rule does not list goes by its unit: tok/s up, ms down), `reject` when
wholly on the worse side, `inconclusive` when it straddles 0. Without round deltas (or fewer
than `min_rounds`) the producer's ci95 decides, unadjusted, and the reason says so. A
comparison follows its primary metric; any metric wholly worse rejects it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

from meshcert.evidence.defaults import DEFAULT_SEED
from meshcert.evidence.parsers.mesh_json import unit_of
from meshcert.evidence.report import ABDecision, ABMetricDecision, ABVerdict
from meshcert.evidence.rules import AB_RULE, ABRule, Direction
from meshcert.evidence.stats import comparison_seed, holm

ALPHA = 0.05
_REPLICATES = 4000


def _bootstrap(deltas: np.ndarray, name: str) -> np.ndarray:
    rng = np.random.default_rng(comparison_seed(DEFAULT_SEED, name))
    idx = rng.integers(0, deltas.size, size=(_REPLICATES, deltas.size))
    return np.median(deltas[idx], axis=1)


def _side(low: float, high: float, better: str | None) -> ABVerdict:
    if better is None or low <= 0 <= high:
        return "inconclusive"
    up = low > 0
    return "promote" if up == (better == "higher") else "reject"


def direction(metric: str, rule: ABRule = AB_RULE) -> Direction | None:
    """Which way is better for a metric: the rule's table, else what its unit says (tok/s up;
    a duration in ms down); None when neither knows (never decided)."""
    known = rule.directions.get(metric)
    if known is not None:
        return known
    unit = unit_of(metric)
    return "higher" if unit == "tok/s" else "lower" if unit == "ms" else None


def decide_ab(records: Iterable[Mapping[str, Any]], rule: ABRule = AB_RULE) -> list[ABDecision]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for rec in records:
        if rec.get("kind") == "ab_delta":
            groups.setdefault((str(rec.get("source_file")), str(rec.get("params"))), []).append(rec)
    boots: dict[str, np.ndarray] = {}
    pvalues: dict[str, float] = {}
    for (file, params), recs in groups.items():
        for rec in recs:
            deltas = np.asarray((rec.get("extra") or {}).get("round_deltas") or [], dtype=float)
            name = f"{file}|{params}|{rec.get('metric')}"
            if deltas.size >= rule.min_rounds:
                dist = _bootstrap(deltas, name)
                boots[name] = dist
                p_low = (1 + np.count_nonzero(dist <= 0)) / (dist.size + 1)
                p_high = (1 + np.count_nonzero(dist >= 0)) / (dist.size + 1)
                pvalues[name] = float(min(1.0, 2 * min(p_low, p_high)))
    adjusted = holm(pvalues, ALPHA)
    out: list[ABDecision] = []
    for (file, params), recs in groups.items():
        metrics: list[ABMetricDecision] = []
        for rec in recs:
            metric = str(rec.get("metric"))
            extra = rec.get("extra") or {}
            better = direction(metric, rule)
            name = f"{file}|{params}|{metric}"
            ci = extra.get("ci95")
            d = ABMetricDecision(metric=metric, better=better, median=float(rec["value"]),
                                 rounds=len(extra.get("round_deltas") or []), ci95=ci,
                                 verdict="inconclusive", pointer=str(extra.get("pointer")))
            h = adjusted.get(name)
            if h is not None:
                level = h.level / 2
                low, high = np.quantile(boots[name], [level, 1 - level])
                d.ci_low_adjusted, d.ci_high_adjusted = float(low), float(high)
                d.p_value, d.p_adjusted = float(pvalues[name]), float(h.p_adjusted)
                side = _side(float(low), float(high), better) if h.p_adjusted < ALPHA \
                    else "inconclusive"
                if ci and side != "inconclusive" and _side(ci[0], ci[1], better) != side:
                    side = "inconclusive"        # the producer's interval disagrees
                d.verdict = side
            elif ci:
                d.verdict = _side(float(ci[0]), float(ci[1]), better)
            metrics.append(d)
        worse = [m for m in metrics if m.verdict == "reject"]
        primary = next((m for m in metrics if m.metric == rule.primary), None)
        params_dict = recs[0].get("param_dict") or {}
        if worse:
            verdict: ABVerdict = "reject"
            reason = f"{worse[0].metric} is wholly worse (median {worse[0].median:+.2f}%)"
        elif primary is None:
            verdict, reason = "inconclusive", f"no paired delta of {rule.primary}"
        else:
            verdict = primary.verdict
            how = ("Holm-adjusted bootstrap interval of the round deltas" if primary.p_adjusted
                   is not None else "the producer's ci95 (no round deltas: Holm not applied)")
            reason = (f"{rule.primary} median {primary.median:+.2f}%: "
                      f"{'wholly better' if verdict == 'promote' else 'straddles 0'} by {how}")
        out.append(ABDecision(comparison=f"{params_dict.get('old')} -> {params_dict.get('new')}",
                              file=file, old=_text(params_dict.get("old")),
                              new=_text(params_dict.get("new")), verdict=verdict,
                              reason=reason, metrics=metrics))
    return out


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
