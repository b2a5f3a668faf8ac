"""Fixtures for the publish tests: a fake Hub on 127.0.0.1 with tokens, aimed at by the real
huggingface_hub client, with Xet off in the client as the meshcert command turns it off (this
Hub refuses Xet, so a publish that works used LFS); `xet_on` turns it back on.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.hub_fixture import serving
from tests.support.hub_server import FakeHub

WRITER = "hf_alice_writes_0123456789"  # alice: her namespace and the meshllm org
OUTSIDER = "hf_bob_reads_0123456789"  # bob: his namespace only


@pytest.fixture
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    with serving(FakeHub(), tmp_path, monkeypatch) as fake:
        fake.add_token(WRITER, user="alice", orgs={"meshllm": "write"})
        fake.add_token(OUTSIDER, user="bob")
        monkeypatch.setenv("HF_TOKEN", WRITER)
        yield fake


@pytest.fixture
def xet_on(hub: FakeHub, monkeypatch: pytest.MonkeyPatch) -> None:
    """The client as a process that imported huggingface_hub without HF_HUB_DISABLE_XET."""
    from huggingface_hub import constants

    pytest.importorskip("hf_xet")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", False)
