"""Fixtures for the HF Jobs launcher: the in-repo Hub (its Jobs API runs jobs for real, in a
private mount namespace) aimed at by the real huggingface_hub client, and a token that may
run jobs."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub_fixture import serving
from tests.support.hub_server import FakeHub

TOKEN = "hf_alice_jobs_token"


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        fake.add_token(TOKEN, user="alice", orgs={"meshllm": "write"})
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield fake
