"""mesh-llm's promotion.json candidate beside meshcert's decision (spec section 7).

mesh-llm: eligible = full roster, c1 parity, both mean % gains over `mesh` > 0; best sum wins.
meshcert recomputes the candidate from the same numbers (eligible flag AND both gains > 0,
best sum), and decides: `promote` only when an A/B decision for that arm promotes (a winner is
a candidate, never a promotion), `reject` when no candidate is eligible, else `inconclusive`.
Every place the two differ is a note.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from meshcert.evidence.report import ABDecision, ABVerdict, PromotionCheck
from meshcert.evidence.rules import PROMOTION_RULE, PromotionRule


def check_promotions(records: Iterable[Mapping[str, Any]], ab: Iterable[ABDecision] = (),
                     rule: PromotionRule = PROMOTION_RULE) -> list[PromotionCheck]:
    groups: dict[tuple[str, int], dict[str, Any]] = {}
    for rec in records:
        if rec.get("format") != "competitive-promotion":
            continue
        extra = rec.get("extra") or {}
        pd = rec.get("param_dict") or {}
        g = groups.setdefault((str(rec.get("source_file")), int(extra.get("group") or 0)),
                              {"platform": pd.get("platform"), "model": pd.get("model"),
                               "winner": extra.get("winner"), "arms": {}})
        arm = g["arms"].setdefault(str(pd.get("arm")), {"eligible": extra.get("eligible")})
        arm[str(rec.get("metric"))] = rec.get("value")
    promoted = {d.new for d in ab if d.verdict == "promote" and d.new}
    out: list[PromotionCheck] = []
    for (file, _), g in groups.items():
        notes: list[str] = []
        scores: dict[str, float] = {}
        for arm, facts in g["arms"].items():
            gains = [facts.get(f) for f in rule.gain_fields]
            ours = facts["eligible"] is True and all(v is not None and v > 0 for v in gains)
            if facts["eligible"] is True and not ours:
                shown = ", ".join(f"{v:+g}%" if v is not None else "missing" for v in gains)
                notes.append(f"mesh-llm marks {arm} eligible but its mean gains {shown} are "
                             "not all above 0")
            if ours:
                scores[arm] = sum(v for v in gains if v is not None)
        best = max(scores, key=lambda a: scores[a]) if scores else None
        winner = g["winner"]
        verdict: ABVerdict
        if best is None:
            verdict = "reject"
        elif best in promoted:
            verdict = "promote"
        else:
            verdict = "inconclusive"
            notes.append(f"{best} is a candidate: no A/B comparison for it promotes (mean % "
                         "gains carry no interval)")
        if winner != best:
            notes.append(f"mesh-llm's winner {winner!r} differs from the recomputed best "
                         f"eligible arm {best!r}")
        if winner and verdict != "promote":
            notes.append(f"mesh-llm names {winner} the winner; meshcert: {verdict}")
        out.append(PromotionCheck(platform=_text(g["platform"]), model=_text(g["model"]),
                                  file=file, mesh_llm_winner=_text(winner),
                                  meshcert_candidate=best, meshcert_verdict=verdict,
                                  agree=winner == best and verdict == "promote", notes=notes))
    return out


def _text(value: Any) -> str | None:
    return None if value is None else str(value)
