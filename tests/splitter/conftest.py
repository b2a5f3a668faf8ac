"""A fake Hub on 127.0.0.1 for the Hub-source tests (huggingface_hub's import-time
environment is prepared first, as tests/certify/hub does)."""

from __future__ import annotations

from tests.support.hub_env import close_client_session, point_at, prepare_process_env

prepare_process_env()

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.support.hub_server import FakeHub  # noqa: E402


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    fake = FakeHub().start()
    point_at(monkeypatch, fake.url, tmp_path / "hf-home", fake.sleeps)
    try:
        yield fake
    finally:
        fake.stop()
        close_client_session()
