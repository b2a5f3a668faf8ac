"""The reports' timestamps: UTC, to the millisecond, ending in Z (cert.json's `started_at`)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from meshcert.core.clock import utc_now


def test_a_timestamp_is_utc_to_the_millisecond_with_a_z() -> None:
    before = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=1)
    stamp = utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before <= parsed <= datetime.now(UTC)
