"""The real llama.cpp tools for the slow tiers: where `scripts/build_llama_cpp.py` put them.

Tests never build (CI runs the script before pytest, see scripts/test.sh). When a tool is
missing: fail if MESHCERT_REQUIRE_LIVE=1 (CI must not skip the real tier), else skip with the
command that builds it.

    bench = llama_tool("llama-bench")          # Path, or skip / fail
    bin_dir = llama_bin_dir()                  # Path | None

`MESHCERT_LLAMA_BIN` points at another bin dir holding the same tool names (a local build).
The cache location and key come from the build script itself, so the two never disagree.
"""

from __future__ import annotations

import importlib.util
import json
import os
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build_llama_cpp.py"
REQUIRE_ENV = "MESHCERT_REQUIRE_LIVE"
BIN_ENV = "MESHCERT_LLAMA_BIN"


@cache
def build_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_llama_cpp", BUILD_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tool_names() -> tuple[str, ...]:
    names: tuple[str, ...] = build_script().TARGETS
    return names


def llama_bin_dir() -> Path | None:
    """The bin dir holding every tool, or None when it is not built (yet)."""
    explicit = os.environ.get(BIN_ENV)
    if explicit:
        given = Path(explicit)
        return given if all(os.access(given / n, os.X_OK) for n in tool_names()) else None
    path: Path = build_script().bin_dir()
    return path if build_script().installed(path) else None


def build_info() -> dict[str, Any]:
    """BUILD_INFO.json of the cached build (sdist sha256, flags, binaries' sha256, version)."""
    bin_dir = llama_bin_dir()
    info = bin_dir.parent / "BUILD_INFO.json" if bin_dir else None
    if info is None or not info.is_file():
        return {}
    data: dict[str, Any] = json.loads(info.read_text())
    return data


def llama_tool(name: str) -> Path:
    """The path of one built tool; skip (or, with MESHCERT_REQUIRE_LIVE=1, fail) if absent."""
    if name not in tool_names():
        raise ValueError(f"{name!r} is not built by {BUILD_SCRIPT.name}: {tool_names()}")
    bin_dir = llama_bin_dir()
    if bin_dir is not None:
        return bin_dir / name
    message = (f"llama.cpp {name} not built; run `python3 scripts/build_llama_cpp.py` "
               f"(cache: {build_script().bin_dir()})")
    if os.environ.get(REQUIRE_ENV) == "1":
        pytest.fail(f"{REQUIRE_ENV}=1 but {message}", pytrace=False)
    pytest.skip(message)
