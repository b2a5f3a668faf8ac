"""Finding the built llama.cpp tools: skip locally, fail in CI, and a cache hit builds nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import llama_tools


def fake_install(root: Path) -> Path:
    """What a finished build leaves in the cache (executables + BUILD_INFO.json)."""
    bin_dir = root / llama_tools.build_script().build_key() / "bin"
    bin_dir.mkdir(parents=True)
    for name in llama_tools.tool_names():
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\necho version: 0\n")
        tool.chmod(0o755)
    (bin_dir.parent / "BUILD_INFO.json").write_text(json.dumps({"sdist_sha256": "x"}))
    return bin_dir


def test_the_five_tools_are_the_build_targets() -> None:
    assert llama_tools.tool_names() == (
        "test-backend-ops", "llama-bench", "llama-perplexity", "llama-server",
        "llama-gguf-split")


def test_a_missing_tool_skips_locally(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("MESHCERT_LLAMA_CACHE", str(tmp_path))
    monkeypatch.delenv("MESHCERT_LLAMA_BIN", raising=False)
    monkeypatch.delenv("MESHCERT_REQUIRE_LIVE", raising=False)
    with pytest.raises(pytest.skip.Exception, match="run `python3 scripts/build_llama_cpp.py`"):
        llama_tools.llama_tool("llama-bench")


def test_a_missing_tool_fails_when_live_is_required(monkeypatch: pytest.MonkeyPatch,
                                                    tmp_path: Path) -> None:
    monkeypatch.setenv("MESHCERT_LLAMA_CACHE", str(tmp_path))
    monkeypatch.delenv("MESHCERT_LLAMA_BIN", raising=False)
    monkeypatch.setenv("MESHCERT_REQUIRE_LIVE", "1")
    with pytest.raises(pytest.fail.Exception, match="MESHCERT_REQUIRE_LIVE=1 but llama.cpp"):
        llama_tools.llama_tool("test-backend-ops")


def test_an_installed_cache_is_found_and_a_rerun_builds_nothing(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bin_dir = fake_install(tmp_path)
    monkeypatch.setenv("MESHCERT_LLAMA_CACHE", str(tmp_path))
    monkeypatch.delenv("MESHCERT_LLAMA_BIN", raising=False)
    assert llama_tools.llama_tool("llama-server") == bin_dir / "llama-server"
    assert llama_tools.build_info() == {"sdist_sha256": "x"}
    # the script with the cache present: prints the bin dir, downloads and compiles nothing
    env = {**os.environ, "MESHCERT_LLAMA_CACHE": str(tmp_path), "PATH": "/nonexistent"}
    done = subprocess.run([sys.executable, str(llama_tools.BUILD_SCRIPT)], env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{bin_dir}\n"
    assert "cached:" in done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == [bin_dir.parent.name]


def test_the_cache_key_changes_with_the_source_and_the_flags(
        monkeypatch: pytest.MonkeyPatch) -> None:
    script = llama_tools.build_script()
    key = script.build_key()
    assert key.startswith(f"{script.BUILD}-{script.SDIST_SHA256[:12]}-")
    monkeypatch.setattr(script, "CMAKE_FLAGS", (*script.CMAKE_FLAGS, "-DGGML_AVX512=OFF"))
    assert script.build_key() != key
    monkeypatch.setattr(script, "SDIST_SHA256", "0" * 64)
    assert script.build_key() != key
