"""Fixtures for the fake Hub's own tests: a started FakeHub aimed at by the real
huggingface_hub client, with Xet switched off as the product switches it off."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub_fixture import serving
from tests.support.hub_server import FakeHub


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    from huggingface_hub import constants

    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        # hf_xet is installed, so the client would upload through Xet, which this Hub does
        # not offer (test_xet_is_not_offered shows what happens then)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
        yield fake
