"""The reports' timestamps: UTC, to the millisecond, with a Z (`started_at`, `finished_at`)."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
