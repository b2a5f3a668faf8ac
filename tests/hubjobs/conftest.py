"""Fixtures for the HF Jobs launcher: the in-repo Hub (its Jobs API runs jobs for real, in a
private mount namespace) aimed at by the real huggingface_hub client, and a token that may
run jobs."""

from __future__ import annotations

from tests.support.hub_env import close_client_session, point_at, prepare_process_env

prepare_process_env()

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.support.hub_server import FakeHub  # noqa: E402

TOKEN = "hf_alice_jobs_token"


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    fake = FakeHub().start()
    point_at(monkeypatch, fake.url, tmp_path / "hf-home", fake.sleeps)
    fake.add_token(TOKEN, user="alice", orgs={"meshllm": "write"})
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    try:
        yield fake
    finally:
        fake.stop()
        close_client_session()
