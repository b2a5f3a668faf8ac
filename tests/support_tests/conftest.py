"""Fixtures for the fake Hub's own tests: a started FakeHub aimed at by the real
huggingface_hub client, with Xet switched off as the product switches it off.

The environment huggingface_hub reads at import is prepared here, before anything in these
tests imports it; `point_at` then aims env and constants at the running fake for each test.
"""

from __future__ import annotations

from tests.support.hub_env import close_client_session, point_at, prepare_process_env

prepare_process_env()

from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.support.hub_server import FakeHub  # noqa: E402


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    from huggingface_hub import constants

    fake = FakeHub().start()
    point_at(monkeypatch, fake.url, tmp_path / "hf-home", fake.sleeps)
    # hf_xet is installed, so the client would upload through Xet, which this Hub does not
    # offer (test_xet_is_not_offered shows what happens then)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    try:
        yield fake
    finally:
        fake.stop()
        close_client_session()
