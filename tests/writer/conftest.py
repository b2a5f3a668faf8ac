"""A fake Hub on 127.0.0.1 for the Hub-source tests."""

from tests.support.hub_fixture import hub  # noqa: F401
