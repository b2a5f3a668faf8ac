"""Drive the real headless Chromium: dump the rendered DOM and take screenshots."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CANDIDATES = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")
TIMEOUT_S = 90


def chromium_or_skip() -> str:
    """The Chromium binary; when it is absent: fail if MESHCERT_REQUIRE_BROWSER=1 (CI), else
    skip."""
    found = next((c for c in CANDIDATES if os.access(c, os.X_OK)), None) or shutil.which(
        "chromium")
    if found:
        return found
    message = ("headless Chromium not found (looked for " + ", ".join(CANDIDATES)
               + "); install Debian's `chromium` package")
    if os.environ.get("MESHCERT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"MESHCERT_REQUIRE_BROWSER=1 but {message}", pytrace=False)
    pytest.skip(message)


def _run(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile.mkdir(parents=True, exist_ok=True)
    command = [binary, *FLAGS, f"--user-data-dir={profile}", *args]
    result = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S,
                            check=False)
    assert result.returncode == 0, f"chromium exited {result.returncode}: {result.stderr[-2000:]}"
    return result


def dump_dom(binary: str, page: Path, profile: Path,
             size: tuple[int, int] | None = None) -> str:
    window = [f"--window-size={size[0]},{size[1]}"] if size is not None else []
    return _run(binary, profile, *window, "--dump-dom", page.resolve().as_uri()).stdout


def screenshot(binary: str, page: Path, png: Path, profile: Path,
               size: tuple[int, int] = (1200, 2000)) -> Path:
    _run(binary, profile, f"--screenshot={png}", f"--window-size={size[0]},{size[1]}",
         page.resolve().as_uri())
    assert png.is_file(), f"chromium wrote no screenshot at {png}"
    keep = os.environ.get("MESHCERT_SCREENSHOT_DIR")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(png, Path(keep) / png.name)
    return png


def print_pdf(binary: str, page: Path, pdf: Path, profile: Path) -> Path:
    """Print with the page's @media print rules (what a reviewer's "Save as PDF" gives)."""
    _run(binary, profile, "--no-pdf-header-footer", f"--print-to-pdf={pdf}",
         page.resolve().as_uri())
    assert pdf.is_file(), f"chromium wrote no PDF at {pdf}"
    return pdf
