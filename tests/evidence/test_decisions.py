"""Verdicts on repeated-sample data follow the written rules (evidence.md, decisions.py)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pytest

from meshcert.evidence.decisions import DecisionOptions, decide_all
from meshcert.evidence.matching import resolve_rules
from meshcert.evidence.report import Decision
from meshcert.evidence.rules import RULES
from meshcert.evidence.settings import EvidenceSettings
from meshcert.evidence.stats import DEFAULT_SEED, ratio_interval
from tests.evidence.gate_logs import parity_console, repeated, settings, table

Q2_ROWS = {"ffn_q3_down": 1147.21, "ffn_q2_down": 817.38}
Q2_PARITY = {"parity.console.log": parity_console({"ffn_q3_down": True, "ffn_q2_down": True})}


def kld_log(ratio: float = 1.0018, kld: float = 0.0044) -> str:
    """llama-perplexity --kl-divergence output of the candidate vs the q3_K baseline logits."""
    return "\n".join([
        "kl_divergence: computing over 40 chunks, n_ctx=512, batch_size=2048, n_seq=4", "",
        "====== Perplexity statistics ======",
        f"Mean PPL(Q)                   :   {3.9231 * ratio:.6f} ±   0.029655",
        "Mean PPL(base)                :   3.923100 ±   0.029170",
        "Cor(ln(PPL(Q)), ln(PPL(base))):  99.91%",
        f"Mean ln(PPL(Q)/PPL(base))     :   {np.log(ratio):.6f} ±   0.000301",
        f"Mean PPL(Q)/PPL(base)         :   {ratio:.6f} ±   0.000301", "",
        "====== KL divergence statistics ======",
        f"Mean    KLD:   {kld:.6f} ±   0.000112", "",
        "====== Token probability statistics ======",
        "Same top p: 97.123 ± 0.123 %", ""])


GOOD_QUALITY = {"q2-k-routed-down.kld.log": kld_log()}  # the file stem is the default label


def decide(*texts: Mapping[str, str], s: EvidenceSettings | None = None,
           options: DecisionOptions | None = None) -> dict[str, Decision]:
    ev = resolve_rules(table(*texts), RULES)
    decisions, _ = decide_all(ev, s or settings(), options or DecisionOptions(replicates=4000))
    return {d.policy: d for d in decisions}


def q2(*texts: Mapping[str, str], runs: int = 5, **rows: float) -> Decision:
    return decide(repeated({**Q2_ROWS, **rows}, runs), *texts)["q2_K_routed_down"]


def test_promote_with_parity_a_clear_win_and_quality() -> None:
    d = q2(Q2_PARITY, GOOD_QUALITY)
    assert d.verdict == "promote", d.reason
    c = d.comparisons[0]
    assert (c.n_baseline, c.n_candidate) == (5, 5)
    assert c.speedup == pytest.approx(1147.21 / 817.38, rel=0.02)
    assert c.ci_low is not None and c.ci_high is not None and 1.08 < c.ci_low < c.ci_high
    assert d.parity.status == "passed" and len(d.parity.cases) == 2
    assert d.quality is not None and d.quality.status == "passed"
    assert d.quality.ppl_increase == pytest.approx(0.0018)
    assert d.missing_evidence == []
    assert {s.file for s in d.sources} >= {"run-1.console.log", "parity.console.log",
                                            "q2-k-routed-down.kld.log"}


def test_needs_quality_when_only_quality_is_missing() -> None:
    d = q2(Q2_PARITY)
    assert d.verdict == "needs-quality"
    assert d.missing_evidence[0].startswith("quality: perplexity change: a --kl-divergence run "
                                            "of q2-k-routed-down")


def test_needs_parity_when_only_parity_is_missing() -> None:
    d = q2(GOOD_QUALITY)
    assert d.verdict == "needs-parity"
    assert d.missing_evidence == ["parity (test-backend-ops test mode) for: combined FFN q3_K "
                                  "down, combined FFN q2_K down"]


def test_keep_evidence_gated_when_both_parity_and_quality_are_missing() -> None:
    d = q2()
    assert d.verdict == "keep-evidence-gated"
    assert "both parity and quality evidence are missing" in d.reason
    assert len(d.missing_evidence) == 2


def test_reject_when_parity_failed_even_with_one_sample() -> None:
    failing = {"parity.console.log": parity_console({"ffn_q3_down": True,
                                                     "ffn_q2_down": False})}
    for runs in (1, 5):
        d = q2(failing, GOOD_QUALITY, runs=runs)
        assert d.verdict == "reject"
        assert d.reason.startswith("parity failed: ffn_q2_down (Metal)")
        assert d.parity.status == "failed"


def test_reject_when_the_candidate_is_significantly_slower() -> None:
    d = q2(Q2_PARITY, GOOD_QUALITY, ffn_q2_down=1300.0)
    assert d.verdict == "reject"
    c = d.comparisons[0]
    assert c.significantly_slower and c.ci_high is not None and c.ci_high < 1.0


def test_inconclusive_with_fewer_than_three_samples_says_how_many_more() -> None:
    d = q2(Q2_PARITY, GOOD_QUALITY, runs=2)
    assert d.verdict == "inconclusive"
    assert d.missing_evidence == [
        "1 more sample(s) of combined FFN q3_K down (has 2, needs 3)",
        "1 more sample(s) of combined FFN q2_K down (has 2, needs 3)"]
    assert d.comparisons[0].ci_low is None and d.holm is None


def test_keep_evidence_gated_when_the_win_does_not_clear_the_threshold() -> None:
    d = q2(Q2_PARITY, GOOD_QUALITY, ffn_q2_down=1100.0)  # 1.043x < 1.08
    assert d.verdict == "keep-evidence-gated"
    assert "does not clear 1.08" in d.reason


def test_quality_outside_limits_keeps_it_gated_and_the_limits_are_options() -> None:
    worse = {"q2-k-routed-down.kld.log": kld_log(ratio=1.0118, kld=0.0304)}
    d = q2(Q2_PARITY, worse)
    assert d.verdict == "keep-evidence-gated"
    assert d.quality is not None and d.quality.status == "failed"
    assert d.reason == ("quality outside limits: perplexity increase 1.18% is above the 1.00% "
                        "limit; mean KLD 0.03040 is above the 0.01 limit")
    lax = DecisionOptions(replicates=4000, max_ppl_increase=0.02, max_kld_mean=0.05)
    texts = (repeated(Q2_ROWS, 5), Q2_PARITY, worse)
    assert decide(*texts, options=lax)["q2_K_routed_down"].verdict == "promote"


def test_quality_from_separate_perplexity_runs_and_custom_labels() -> None:
    base = "perplexity: calculating perplexity over 40 chunks\nFinal estimate: PPL = 3.9231 " \
        "+/- 0.02917\n"
    cand = "perplexity: calculating perplexity over 40 chunks\nFinal estimate: PPL = 3.9300 " \
        "+/- 0.02920\n"
    options = DecisionOptions(replicates=4000, quality_baseline="ppl-q3",
                              quality_candidate="ppl-q2")
    d = decide(repeated(Q2_ROWS, 5), Q2_PARITY, {"ppl-q3.log": base, "ppl-q2.log": cand},
               options=options)["q2_K_routed_down"]
    assert d.quality is not None
    assert d.quality.ppl_increase == pytest.approx(3.93 / 3.9231 - 1)
    assert d.quality.ppl_increase_method == "candidate PPL / baseline PPL"
    assert d.verdict == "needs-quality"  # no KL divergence run
    assert d.quality.missing == ["mean KL divergence: a --kl-divergence run of ppl-q2 against "
                                 "ppl-q3 logits"]


# -- review tripwires: the gate trips, the decision follows its rule --------------------


MERGED_PARITY = {"parity-merged.console.log": parity_console(
    {"ffn_q3_down": True, "ffn_q3_down_merged_shexp": True})}


def test_merged_shared_tripwire_promotes_and_keeps_the_revisit_message() -> None:
    d = decide(repeated({"ffn_q3_down": 1147.21, "ffn_q3_down_merged_shexp": 868.59}, 5),
               MERGED_PARITY)["moe_merged_shared_gate_up"]
    assert d.verdict == "promote", d.reason
    assert d.review_required
    assert "revisit disabled merged shared-expert policy" in d.reason
    assert d.messages[0].startswith("revisit disabled merged shared-expert policy")
    c = d.comparisons[0]
    assert c.ci_low is not None and c.ci_low > 1.02


def test_merged_shared_tripwire_without_parity_needs_parity() -> None:
    d = decide(repeated({"ffn_q3_down": 1147.21, "ffn_q3_down_merged_shexp": 868.59}, 5)
               )["moe_merged_shared_gate_up"]
    assert d.verdict == "needs-parity"
    assert d.review_required


def test_tripwire_below_threshold_and_with_few_samples() -> None:
    quiet = decide(repeated({"ffn_q3_down": 1147.21, "ffn_q3_down_merged_shexp": 1146.0}, 5),
                   MERGED_PARITY)["moe_merged_shared_gate_up"]
    assert quiet.verdict == "keep-evidence-gated" and not quiet.review_required
    one = decide(repeated({"ffn_q2_down": 817.38, "ffn_q2_down_weighted": 700.0}, 1))
    weighted = one["moe_weighted_down"]
    assert weighted.verdict == "inconclusive"
    assert weighted.review_required  # the point estimate trips it, as the gate does
    assert weighted.messages[0].startswith("revisit q2 unweighted policy (point estimate 1.1")


# -- Phase D ------------------------------------------------------------------------------------

DECODE_US = {"d_direct_sparse_kv257_top64": 106.57, "d_selected_row_flash_kv257_top64": 63.40,
             "d_direct_sparse_kv1024_top768": 988.95, "d_selected_row_flash_kv1024_top768": 55.11,
             "d_direct_sparse_kv2048_top768": 984.50, "d_selected_row_flash_kv2048_top768": 55.62,
             "d_dense_flash_kv257_nb1": 71.72}


def test_phase_d_decisions_appear_only_with_their_rows() -> None:
    ev = resolve_rules(table(repeated(Q2_ROWS, 3)), RULES)
    decisions, omitted = decide_all(ev, settings(), DecisionOptions(replicates=2000))
    assert [d.policy for d in decisions] == ["moe_merged_shared_gate_up", "moe_weighted_down",
                                             "q2_K_routed_down"]
    assert [o.policy for o in omitted] == ["selected_row_flash", "decode", "short_prefill"]


def test_decode_compact_flash_promotes_with_parity_on_every_shape() -> None:
    parity = {"parity-d.console.log": parity_console(dict.fromkeys(DECODE_US, True))}
    d = decide(repeated(DECODE_US, 4), parity)["decode"]
    assert d.value == "compact-flash"
    assert d.verdict == "promote", d.reason
    assert len(d.comparisons) == 4 and all(c.clears_threshold for c in d.comparisons)


def test_selected_row_flash_sums_compact_gather_and_flash() -> None:
    us = {"d_compact_gather": 20.0, "d_compact_flash_kv768": 50.0,
          "d_selected_row_flash_kv1024_top768": 55.11}
    d = decide(repeated(us, 4))["selected_row_flash"]
    c = d.comparisons[0]
    assert [r.label for r in c.baseline] == ["d_compact_gather", "d_compact_flash_kv768"]
    assert c.speedup == pytest.approx(70.0 / 55.11, rel=0.02)
    assert d.verdict == "needs-parity"


# -- Holm ---------------------------------------------------------------------------------------


def test_holm_turns_a_single_decisions_promotion_into_keep_when_three_are_tested() -> None:
    runs = repeated({"ffn_q3_down": 1147.21, "ffn_q2_down": 1050.0}, 12, spread=0.02, seed=3)
    resolved = resolve_rules(table(runs), RULES)
    base = resolved.labels["ffn_q3_down"].samples
    cand = resolved.labels["ffn_q2_down"].samples
    assert base is not None and cand is not None
    spec = next(d for d in RULES.decisions if d.policy == "q2_K_routed_down")
    name = f"{spec.policy}/{spec.comparisons[0].label}"
    dist = ratio_interval([base.values], [cand.values], threshold=1.0, name=name,
                          seed=DEFAULT_SEED, replicates=4000).distribution
    threshold = float(np.quantile(dist, 0.015))
    p = (1 + np.count_nonzero(dist <= threshold)) / 4001
    assert 0.025 / 3 < p < 0.025  # significant alone, not after Holm with m = 3
    s = settings(GLM52_PHASE_E_Q2_FFN_MIN_SPEEDUP=repr(threshold))
    alone = decide(runs, Q2_PARITY, GOOD_QUALITY, s=s)["q2_K_routed_down"]
    assert alone.verdict == "promote" and alone.holm is not None and alone.holm.m == 1
    others = repeated({"ffn_q3_down_merged_shexp": 1146.0, "ffn_q2_down_weighted": 1049.0}, 12,
                      spread=0.02, seed=4, prefix="other")
    family = decide(runs, others, Q2_PARITY, GOOD_QUALITY, s=s)
    d = family["q2_K_routed_down"]
    assert d.holm is not None and d.holm.m == 3 and d.holm.rank == 1
    assert d.holm.p_adjusted == pytest.approx(3 * d.holm.p_value)
    assert d.verdict == "keep-evidence-gated"
    assert "after Holm's correction" in d.reason
    assert {x.holm.m for x in family.values() if x.holm is not None} == {3}
