"""Fixtures for the hf:// tests: a fake Hub on 127.0.0.1 and the real huggingface_hub client
(tests/support/hub_fixture.py prepares the environment huggingface_hub reads at import)."""

from tests.support.hub_fixture import hub  # noqa: F401
