"""The mesh-llm part of an EvidenceReport: rows, history classes, A/B, KV dtype, promotion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from meshcert.evidence.ab import decide_ab
from meshcert.evidence.history import classify_all, history_from_records
from meshcert.evidence.kv_dtype import decide_kv_dtypes
from meshcert.evidence.mesh_rows import mesh_rows
from meshcert.evidence.promotion import check_promotions
from meshcert.evidence.rules import MIN_SAMPLES, MeshRules


def mesh_evidence(records: Sequence[Mapping[str, Any]], rules: MeshRules, *,
                  min_samples: int = MIN_SAMPLES) -> dict[str, Any]:
    """The EvidenceReport fields of the mesh-llm rules (empty lists without mesh rows);
    `min_samples` is the report's one minimum-sample policy (`Rules.min_samples`), which the
    A/B rules read as their floor of rounds."""
    ab = decide_ab(records, rules.ab, min_samples=min_samples)
    history = history_from_records(records, rules.history)
    return {"mesh_rows": mesh_rows(r for r in records if r.get("kind") != "history"),
            "history": classify_all(history, rules.history), "ab_decisions": ab,
            "kv_dtype_decisions": decide_kv_dtypes(records, rules.kv_dtype),
            "promotion_checks": check_promotions(records, ab, rules.promotion)}
