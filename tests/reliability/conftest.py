"""Fixtures for the reliability suite: a fault-injecting fake Hub aimed at by the real
huggingface_hub client, fake OpenAI servers, and a recorder the report script reads.

The environment huggingface_hub reads at import is prepared here, before anything in these
tests imports it (as the hub tests' conftest does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

from tests.reliability.hub_faults import FaultyHub  # noqa: E402
from tests.support.hub_fixture import serving


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FaultyHub]:
    """A started FaultyHub; env and huggingface_hub constants point at it; backoff sleeps are
    recorded in `hub.sleeps` instead of slept."""
    with serving(FaultyHub(), tmp_path, monkeypatch) as fake:
        yield fake


@pytest.fixture
def figures(record_property: Callable[[str, object], None]) -> Callable[..., None]:
    """`figures(faults_injected=3, ...)`: numbers for bench/reliability_report.py (stored as
    pytest user properties, so they also reach JUnit XML)."""

    def record(**values: object) -> None:
        for name, value in values.items():
            record_property(name, value)

    return record


RELIABILITY_DIR = Path(__file__).parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "reliability: the reliability suite (issue 8): fuzzing, "
                            "fault matrices, containment, path safety, secrets")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if RELIABILITY_DIR in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.reliability)
