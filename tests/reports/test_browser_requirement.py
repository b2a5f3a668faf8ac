"""Without Chromium the browser tests skip, unless CI demands the browser (then they fail)."""

from __future__ import annotations

import pytest

from tests.reports import browser


@pytest.fixture
def no_chromium(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(browser, "CANDIDATES", ("/nonexistent/chromium",))
    monkeypatch.setattr(browser.shutil, "which", lambda name: None)


@pytest.mark.usefixtures("no_chromium")
def test_missing_browser_fails_when_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MESHCERT_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="MESHCERT_REQUIRE_BROWSER=1"):
        browser.chromium_or_skip()


@pytest.mark.usefixtures("no_chromium")
def test_missing_browser_skips_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MESHCERT_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="Chromium not found"):
        browser.chromium_or_skip()
