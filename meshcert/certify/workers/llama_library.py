"""Where llama-cpp-python's llama.cpp lives, found without importing it.

Importing `llama_cpp` loads libllama and every ggml backend into the calling process, so the
certifier never does: it only locates the package, and the workers (which may crash) load it.
"""

from __future__ import annotations

from importlib.machinery import PathFinder
from pathlib import Path

_LIB_NAMES = ("libggml-base.so", "libggml-base.dylib", "ggml-base.dll")
NOT_INSTALLED = "llama-cpp-python is not installed (pip install 'meshcert[live]')"


def package_dirs() -> list[Path]:
    """The directories of the `llama_cpp` package a worker started now would import (empty:
    not installed). Looked up on sys.path, not in sys.modules: a llama_cpp some caller
    imported earlier says nothing about what a fresh worker loads."""
    try:
        spec = PathFinder.find_spec("llama_cpp")
    except (ImportError, ValueError):
        return []
    if spec is None or not spec.submodule_search_locations:
        return []
    return [Path(root) for root in spec.submodule_search_locations]


def installed() -> bool:
    return bool(package_dirs())


def find_library() -> Path | None:
    """llama-cpp-python's bundled libggml-base (it exports llama.cpp's GGUF parser)."""
    for root in package_dirs():
        for name in _LIB_NAMES:
            candidate = root / "lib" / name
            if candidate.is_file():
                return candidate
    return None
