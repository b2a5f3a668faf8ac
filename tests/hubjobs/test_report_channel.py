"""A report survives a trip through a job's logs, or the trip is an error, never a
smaller report."""

from __future__ import annotations

import hashlib
import json

import pytest

from meshcert.hubjobs.report_channel import ChannelError, decode, encode

REPORT = json.dumps({"status": "passed", "digests": {  # 500 SHA-256s: several log lines
    f"layers/layer-{i:05d}.gguf": hashlib.sha256(str(i).encode()).hexdigest()
    for i in range(500)}}).encode()


def test_a_report_comes_back_whole_between_other_log_lines() -> None:
    lines = ["Collecting meshcert", *[f"2026-12-01T10:00:00Z {line}" for line in
                                      encode(REPORT, "slice-1")], "done"]
    assert decode(lines, "slice-1") == REPORT


def test_two_jobs_reports_in_one_log_are_kept_apart() -> None:
    other = json.dumps({"status": "failed"}).encode()
    lines = [*encode(REPORT, "slice-0"), *encode(other, "slice-1")]
    assert decode(lines, "slice-0") == REPORT and decode(lines, "slice-1") == other


def test_a_missing_chunk_is_an_error() -> None:
    lines = encode(REPORT, "t")
    assert len(lines) > 2
    with pytest.raises(ChannelError, match="missing"):
        decode(lines[:1] + lines[2:], "t")


def test_a_job_that_stopped_before_the_end_line_has_no_report() -> None:
    with pytest.raises(ChannelError, match="no end line"):
        decode(encode(REPORT, "t")[:-1], "t")


def test_a_mangled_chunk_fails_its_checksum() -> None:
    lines = encode(REPORT, "t")
    head, _, data = lines[0].rpartition(" ")
    lines[0] = f"{head} {data[:-8]}AAAAAAAA"
    with pytest.raises(ChannelError):
        decode(lines, "t")
