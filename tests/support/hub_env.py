"""Point huggingface_hub (and meshcert) at a fake Hub, hermetically.

huggingface_hub reads HF_ENDPOINT, HF_HOME, HF_HUB_DISABLE_TELEMETRY, ... once, at import, so
`prepare_process_env()` runs before anything imports it (from the hub tests' conftest), and
`point_at()` also patches the already-read constants in case another test module imported the
library first. meshcert reads HF_ENDPOINT per call and passes endpoint= explicitly anyway.
"""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

_HOMES: list[str] = []
TOKEN_VARS = ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE",
              "HF_HUB_DISABLE_IMPLICIT_TOKEN")


def prepare_process_env() -> None:
    """Settings huggingface_hub must see at import: no telemetry (no call to the real Hub's
    /api/agent-harnesses), no progress bars, a throw-away HF_HOME (no stored token)."""
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ["HF_HUB_DISABLE_PROGRESS_BARS"] = "1"
    if "huggingface_hub" not in sys.modules:
        if not _HOMES:  # one a process, however many modules ask
            _HOMES.append(tempfile.mkdtemp(prefix="meshcert-hf-home-"))
            atexit.register(remove_process_home)  # nothing left in the temp dir
        os.environ["HF_HOME"] = _HOMES[0]
        os.environ.setdefault("HF_ENDPOINT", "http://127.0.0.1:9")  # never the real Hub


def remove_process_home() -> None:
    """Remove the HF_HOME `prepare_process_env` made (at exit, or when the test session ends,
    before it looks for leftovers in the temp dir)."""
    while _HOMES:
        shutil.rmtree(_HOMES.pop(), ignore_errors=True)


def point_at(monkeypatch: pytest.MonkeyPatch, endpoint: str, home: Path,
             sleeps: list[float]) -> None:
    """Per test: env and huggingface_hub constants aimed at `endpoint`; tokens unset; the
    client's backoff sleeps recorded instead of slept (time.sleep is patched process-wide,
    which also covers meshcert's own retries)."""
    home.mkdir(parents=True, exist_ok=True)
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    for name in TOKEN_VARS:
        monkeypatch.delenv(name, raising=False)
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE",
                        endpoint + "/{repo_id}/resolve/{revision}/{filename}")
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)
    # as the meshcert command sets HF_HUB_DISABLE_XET at its entry point (hf_xet is installed,
    # and this Hub offers no Xet); tests/publish shows what a process without it gets
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_IMPLICIT_TOKEN", False)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    monkeypatch.setattr("huggingface_hub.utils._http.time.sleep", sleeps.append)


def close_client_session() -> None:
    from huggingface_hub.utils import close_session

    close_session()
