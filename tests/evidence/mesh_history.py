"""History rows for the tests and the bench, derived by hand from bench-formats spec section 8
(no real mesh-llm history rows are published: the dataset README only gives the layout)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

from meshcert.evidence.parsers.perf_history import cohort_key_of


def cohort(arm: str = "mesh", concurrency: int = 1) -> dict[str, Any]:
    return {"platform": "h100", "hardware": {"name": "NVIDIA H100 80GB"}, "model": "qwen3-8b",
            "arm": arm, "config_sha256": "c0ffee", "concurrency": concurrency}


def row(sha: str, day: int, tput: float, ttft: float, *, arm: str = "mesh",
        complete: bool = True, concurrency: int = 1) -> dict[str, Any]:
    c = cohort(arm, concurrency)
    return {"schema_version": 1, "created_utc": f"2026-11-{day:02d}T03:00:00Z",
            "source_sha": sha, "cohort_key": cohort_key_of(c), "cohort": c,
            "output_tokens_per_second": tput, "ttft_ms_mean": ttft, "complete": complete}


def series(arm: str, values: list[tuple[float, float]], *, last_complete: bool = True,
           concurrency: int = 1) -> list[dict[str, Any]]:
    return [row(f"{arm[:4]}{i:04d}", i + 1, t, f, arm=arm, concurrency=concurrency,
                complete=last_complete or i < len(values) - 1)
            for i, (t, f) in enumerate(values)]


def jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows)


def generated_lines(n: int, cohorts: int = 8) -> Iterator[bytes]:
    """n history lines over `cohorts` setups (for the streaming test and the bench)."""
    start = datetime(2026, 1, 1, tzinfo=UTC)
    keys = [(cohort(f"arm{c}"), cohort_key_of(cohort(f"arm{c}"))) for c in range(cohorts)]
    for i in range(n):
        c, key = keys[i % cohorts]
        when = (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ")
        yield (json.dumps({"schema_version": 1, "created_utc": when,
                           "source_sha": f"{i:08x}", "cohort_key": key, "cohort": c,
                           "output_tokens_per_second": 400.0 + (i % 7),
                           "ttft_ms_mean": 180.0 + (i % 5), "complete": True},
                          separators=(",", ":")) + "\n").encode()
