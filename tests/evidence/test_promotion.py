"""mesh-llm's promotion.json candidate beside meshcert's decision (fixture derived by hand)."""

from __future__ import annotations

from meshcert.evidence.ab import decide_ab
from meshcert.evidence.promotion import check_promotions
from meshcert.evidence.stats import records
from tests.evidence.parsers.helpers import ingest


def test_a_winner_is_a_candidate_and_disagreements_are_named() -> None:
    (check,) = check_promotions(records(ingest("promotion.json").table))
    assert (check.mesh_llm_winner, check.meshcert_candidate, check.meshcert_verdict,
            check.agree) == ("mesh-adaptive", "mesh-adaptive", "inconclusive", False)
    assert check.notes == [
        "mesh-llm marks llama eligible but its mean gains -3%, +1% are not all above 0",
        "mesh-adaptive is a candidate: no A/B comparison for it promotes (mean % gains carry "
        "no interval)",
        "mesh-llm names mesh-adaptive the winner; meshcert: inconclusive"]


def test_a_promoting_ab_comparison_of_the_arm_promotes() -> None:
    rows = records(ingest("promotion.json", "comparison-adaptive.json").table)
    ab = decide_ab(rows)
    ab[0].new = "mesh-adaptive"
    ab[0].verdict = "promote"
    (check,) = check_promotions(rows, ab)
    assert (check.meshcert_verdict, check.agree) == ("promote", True)
