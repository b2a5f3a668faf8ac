"""Where meshcert keeps what it can rebuild: one cache directory per user, as each platform
names it (platformdirs): `$XDG_CACHE_HOME/meshcert` or `~/.cache/meshcert` on Linux,
`~/Library/Caches/meshcert` on macOS, `%LOCALAPPDATA%\\meshcert\\Cache` on Windows.

Under it, one folder per kind of thing (the names below). meshcert keeps no configuration
files: every setting is an option or an environment variable.

platformdirs is imported when a path is first asked for, not with this module: the header
reader imports this module, and `meshcert --help` needs no cache.
"""

from __future__ import annotations

from pathlib import Path

APP = "meshcert"
STAGES = "stages"  # materialized certification stages (meshcert.certify.materialize)
MODELS = "models"  # the real test models (tests/support/real_models.py)
LLAMA_CPP = "llama.cpp"  # the llama.cpp tools built for the slow tiers (scripts/)
# a file, not a folder: the secret key of the --verify-cache MACs (meshcert.core.verify_cache)
VERIFY_KEY = "verify-cache.key"


def cache_root() -> Path:
    from platformdirs import user_cache_path

    return user_cache_path(APP, appauthor=False)


def cache_dir(kind: str) -> Path:
    """The folder for one kind of cached thing (not created here)."""
    return cache_root() / kind
