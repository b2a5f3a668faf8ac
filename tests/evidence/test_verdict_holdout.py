"""Holdout-style verdict tests: every verdict of every decision of the rules, from repeated runs.

Each case builds fresh repeated perf logs (seeds 101+, never used while writing the rules),
adds or leaves out parity / quality evidence, and checks that the decision gets the verdict
its written rule (evidence.md, decisions.py) gives. Only the decision's own rows are present,
so the Holm family is that decision alone (other Phase E decisions are inconclusive).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from meshcert.evidence.decisions import DecisionOptions, decide_all
from meshcert.evidence.matching import resolve_rules
from meshcert.evidence.report import Decision
from meshcert.evidence.rules import RULES, DecisionSpec
from tests.evidence.gate_logs import parity_console, repeated, settings, table

SEEDS = (101, 202)
BASE_US = 1000.0


def _kld_log(ratio: float = 1.0018, kld: float = 0.0044) -> str:
    return "\n".join([
        "kl_divergence: computing over 40 chunks, n_ctx=512, batch_size=2048, n_seq=4",
        "====== Perplexity statistics ======",
        f"Mean PPL(Q)                   :   {3.9231 * ratio:.6f} ±   0.029655",
        "Mean PPL(base)                :   3.923100 ±   0.029170",
        f"Mean ln(PPL(Q)/PPL(base))     :   {np.log(ratio):.6f} ±   0.000301",
        f"Mean PPL(Q)/PPL(base)         :   {ratio:.6f} ±   0.000301",
        "====== KL divergence statistics ======",
        f"Mean    KLD:   {kld:.6f} ±   0.000112", ""])


def _spec(policy: str) -> DecisionSpec:
    return next(d for d in RULES.decisions if d.policy == policy)


def _us(spec: DecisionSpec, speedup: float) -> dict[str, float]:
    """Row timings giving `speedup` (baseline / candidate) for every comparison."""
    us: dict[str, float] = {}
    for c in spec.comparisons:
        for label in c.baseline:
            us.setdefault(label, BASE_US / len(c.baseline))
        for label in c.candidate:
            us.setdefault(label, BASE_US / speedup / len(c.candidate))
    return us


def _decide(spec: DecisionSpec, *, speedup: float, runs: int, seed: int,
            parity: bool | None, quality: bool) -> Decision:
    texts: list[Mapping[str, str]] = [repeated(_us(spec, speedup), runs, seed=seed)]
    if parity is not None:
        cases = dict.fromkeys(spec.rows(), True)
        if not parity:
            cases[spec.comparisons[0].candidate[0]] = False
        texts.append({"parity.console.log": parity_console(cases)})
    if quality and spec.quality is not None:
        texts.append({f"{spec.quality.candidate}.kld.log": _kld_log()})
    ev = resolve_rules(table(*texts), RULES)
    decisions, _ = decide_all(ev, settings(), DecisionOptions(replicates=2000))
    return next(d for d in decisions if d.policy == spec.policy)


def _threshold(spec: DecisionSpec) -> float:
    return spec.default_threshold()


# verdict -> (speedup as a multiple of the threshold, runs, parity, quality)
SCENARIOS: dict[str, tuple[float, int, bool | None, bool]] = {
    "promote": (1.3, 5, True, True),
    "reject": (0.7, 5, True, True),            # significantly slower (interval below 1.0)
    "needs-parity": (1.3, 5, None, True),
    "needs-quality": (1.3, 5, True, False),    # quant recipes only
    "inconclusive": (1.3, 2, True, True),
    "keep-evidence-gated": (1.0, 5, True, True),  # a win exactly at the threshold
}
CASES = [(d.policy, verdict) for d in RULES.decisions for verdict in SCENARIOS
         if verdict != "needs-quality" or d.quality is not None]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize(("policy", "verdict"), CASES)
def test_every_verdict_of_every_decision(policy: str, verdict: str, seed: int) -> None:
    spec = _spec(policy)
    factor, runs, parity, quality = SCENARIOS[verdict]
    speedup = _threshold(spec) * factor if verdict != "reject" else factor
    d = _decide(spec, speedup=speedup, runs=runs, seed=seed, parity=parity, quality=quality)
    assert d.verdict == verdict, (d.reason, d.missing_evidence)
    if verdict == "promote" and spec.review_message:
        assert spec.review_message in d.reason and d.review_required
    if verdict == "inconclusive":
        assert any("more sample(s)" in m for m in d.missing_evidence)
    if verdict == "needs-parity":
        assert any(m.startswith("parity") for m in d.missing_evidence)


@pytest.mark.parametrize("policy", [d.policy for d in RULES.decisions])
def test_parity_failure_rejects_every_decision_even_with_a_big_win(policy: str) -> None:
    spec = _spec(policy)
    d = _decide(spec, speedup=_threshold(spec) * 1.3, runs=5, seed=303, parity=False,
                quality=True)
    assert d.verdict == "reject"
    assert d.reason.startswith("parity failed: ")
