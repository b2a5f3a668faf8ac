"""The in-repo Hub as a pytest fixture: a fake Hub on 127.0.0.1 with huggingface_hub (and
meshcert) pointed at it. A conftest that needs nothing more imports the fixture:

    from tests.support.hub_fixture import hub  # noqa: F401

and one that adds tokens or settings builds on `serving`:

    @pytest.fixture
    def hub(tmp_path, monkeypatch):
        with serving(FakeHub(), tmp_path, monkeypatch) as fake:
            fake.add_token(...)
            yield fake
"""

from __future__ import annotations

from tests.support.hub_env import close_client_session, point_at, prepare_process_env

prepare_process_env()

import contextlib  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TypeVar  # noqa: E402

import pytest  # noqa: E402

from tests.support.hub_server import FakeHub  # noqa: E402

Hub = TypeVar("Hub", bound=FakeHub)


@contextlib.contextmanager
def serving(fake: Hub, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Hub]:
    """`fake` started, env and huggingface_hub constants aimed at it, backoff sleeps recorded
    in `fake.sleeps` instead of slept; stopped (and the client's session closed) after."""
    fake.start()
    point_at(monkeypatch, fake.url, tmp_path / "hf-home", fake.sleeps)
    try:
        yield fake
    finally:
        fake.stop()
        close_client_session()


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        yield fake
