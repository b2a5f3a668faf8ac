"""Which statistics a report's decisions were made by, for its Method section (Markdown) and
provenance facts (HTML): the Phase E/D bootstrap only when a Phase E/D or user decision is
shown or the gate applies, the A/B test only when the report holds an A/B decision, so an
A/B-only report never names a bootstrap it did not run."""

from __future__ import annotations

from meshcert.evidence.headline import supported_decisions
from meshcert.evidence.report import EvidenceReport


def bootstrap_method_applies(report: EvidenceReport) -> bool:
    """The Phase E/D bootstrap decided something shown (or the gate applies)."""
    return bool(supported_decisions(report)) or report.gate.applies


def ab_method(report: EvidenceReport) -> str | None:
    """One sentence: the A/B test, its Holm family size m, the rounds k, the minimum effects."""
    metrics = [m for d in report.ab_decisions for m in d.metrics]
    if not metrics:
        return None
    family = sum(1 for m in metrics if m.rounds > 0 and m.better is not None)
    ks = sorted({m.min_rounds for m in metrics if m.min_rounds is not None})
    effects = sorted({m.min_effect_percent for m in metrics if m.min_effect_percent is not None})
    rounds = f"at least k = {ks[0]} rounds a metric" if ks else "no metric with rounds"
    effect = ", ".join(f"{e:g}%" for e in effects) or "-"
    return ("sign-flip permutation test of the mean of each metric's paired round deltas "
            "(exact over all 2^n sign vectors, seeded Monte Carlo above the exact limit); Holm "
            f"over the report's m = {family} A/B metric(s); {rounds}; minimum practical effect "
            f"{effect}; the interval of the median is the sign-test interval (order "
            "statistics), not a bootstrap")
