"""meshcert's cache lives where the platform keeps user caches (platformdirs), one folder per
kind of thing, and the product's caches are all found through it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import platformdirs
import pytest

from meshcert.certify.materialize import default_dir
from meshcert.core.cache_paths import STAGES, cache_dir, cache_root

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="XDG is Linux's convention")
def test_on_linux_it_is_the_one_it_always_was(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_root() == Path.home() / ".cache" / "meshcert"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_dir() == tmp_path / "meshcert" / "stages"


def test_every_kind_is_a_folder_of_the_one_root() -> None:
    assert cache_root() == platformdirs.user_cache_path("meshcert", appauthor=False)
    assert cache_dir(STAGES) == cache_root() / "stages" == default_dir()


def test_importing_it_does_not_load_platformdirs() -> None:
    """The header reader imports it; `meshcert --help` needs no cache dir."""
    code = ("import sys; import meshcert.core.cache_paths; "
            "print('platformdirs' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, cwd=ROOT)
    assert done.stdout.strip() == "False", done.stderr
