"""Every evidence test starts from an environment without the gate and threshold variables
(GLM52_PHASE_E_REQUIRE_GATES, ...): a value exported in the developer's shell must not decide
a verdict here."""

from __future__ import annotations

import pytest

from meshcert.evidence.rules import ENV_VARS


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ENV_VARS:
        monkeypatch.delenv(var.name, raising=False)
