"""A long history spills each cohort's rows to a temporary file past SPILL_ROWS, so reading
holds a bounded number of rows in memory: the verdicts are those of reading it all in memory.
History rows derived by hand from bench-formats spec section 8 (tests/evidence/mesh_history.py)."""

from __future__ import annotations

import io

import pytest

from meshcert.evidence import history as history_module
from meshcert.evidence.history import classify_all, read_history
from tests.evidence.mesh_history import generated_lines, jsonl, series


def _verdicts(data: bytes) -> list[tuple[object, ...]]:
    history = read_history(io.BytesIO(data), "h.jsonl")
    return [(v.cohort_key, v.history_class, v.rows, v.baseline_n, v.line, v.source_sha,
             tuple((m.metric, m.baseline_median, m.baseline_mad, m.change) for m in v.metrics),
             tuple(p.line for p in v.points)) for v in classify_all(history)]


def test_spilled_rows_give_the_verdicts_of_rows_in_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    regressed = series("mesh", [(400.0 + i % 3, 180.0) for i in range(20)] + [(350.0, 181.0)])
    data = b"".join(generated_lines(3000, cohorts=3)) + jsonl(regressed).encode()
    in_memory = _verdicts(data)
    monkeypatch.setattr(history_module, "SPILL_ROWS", 7)
    spilled = read_history(io.BytesIO(data), "h.jsonl")
    assert all(s.blocks for s in spilled.series.values())
    assert max(len(s.lines) for s in spilled.series.values()) < 7    # the rest is on disk
    assert _verdicts(data) == in_memory
    assert {v[1] for v in in_memory} == {"pass", "performance-regression"}
