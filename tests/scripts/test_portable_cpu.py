"""The llama.cpp builds run on the machine that built them: portable flags from /proc/cpuinfo,
AMX and AVX-512 never compiled in, and a build made with other flags never reused."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support import llama_tools

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"
AMX_VM_FLAGS = {"sse4_2", "avx", "avx2", "fma", "f16c", "bmi2", "avx512f", "avx512_vnni",
                "amx_tile", "amx_int8", "amx_bf16"}


def _load(name: str) -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    try:
        spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(SCRIPTS))


portable_cpu = _load("portable_cpu")


def test_an_amx_vm_gets_avx2_and_neither_avx512_nor_amx() -> None:
    flags = portable_cpu.ggml_cpu_flags(AMX_VM_FLAGS, "x86_64")
    assert flags[0] == "-DGGML_NATIVE=OFF"
    assert "-DGGML_AVX2=ON" in flags and "-DGGML_FMA=ON" in flags
    for option in ("AVX512", "AVX512_VNNI", "AMX_TILE", "AMX_INT8", "AMX_BF16"):
        assert f"-DGGML_{option}=OFF" in flags


def test_an_older_cpu_gets_only_what_it_lists() -> None:
    flags = portable_cpu.ggml_cpu_flags({"sse4_2", "avx"}, "x86_64")
    assert "-DGGML_AVX=ON" in flags and "-DGGML_AVX2=OFF" in flags and "-DGGML_F16C=OFF" in flags


def test_arm_takes_ggmls_portable_default() -> None:
    assert portable_cpu.ggml_cpu_flags(set(), "aarch64") == ["-DGGML_NATIVE=OFF"]


def test_cpu_flags_come_from_the_first_processor() -> None:
    text = "processor : 0\nflags : fpu avx2 amx_tile\n\nprocessor : 1\nflags : fpu\n"
    assert portable_cpu.cpu_flags(text) == {"fpu", "avx2", "amx_tile"}


@pytest.mark.parametrize(("system_info", "bad"), [
    ("CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | OPENMP = 1 |", []),
    ("CPU : AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | REPACK = 1 |",
     ["AMX_INT8", "AVX512", "AVX512_VNNI"]),
    ("CPU : AVX512 = 0 | AMX_INT8 = 0 |", []),
])
def test_a_native_build_is_told_by_its_system_info(system_info: str, bad: list[str]) -> None:
    assert portable_cpu.forbidden_features(system_info) == bad


def test_the_tools_cache_key_follows_the_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    build = llama_tools.build_script()
    key = build.build_key()
    monkeypatch.setattr(build, "CMAKE_FLAGS", (*build.CMAKE_FLAGS[:-1], "-DGGML_NATIVE=ON"))
    assert build.build_key() != key  # a cache built with other flags is another directory


def test_the_amx_probe_answers_in_words() -> None:
    answer = portable_cpu.amx_probe()
    assert answer in ("not advertised", "executes") or answer.startswith(
        ("faults (", "refused (", "unknown ("))


@pytest.mark.slow
def test_the_installed_llama_cpp_python_is_portable() -> None:
    """What scripts/setup_llama_cpp_python.py guarantees: no AMX or AVX-512 compiled in."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed")
    info = subprocess.run([sys.executable, "-c", "import llama_cpp; print("
                           "llama_cpp.llama_print_system_info().decode())"],
                          capture_output=True, text=True, check=True).stdout
    assert portable_cpu.forbidden_features(info) == [], info


@pytest.mark.slow
def test_the_built_tools_were_built_with_todays_flags() -> None:
    info = llama_tools.build_info()
    if not info:
        llama_tools.llama_tool("llama-bench")  # skips (or fails in CI) with the build command
    assert info["cmake_flags"] == list(llama_tools.build_script().CMAKE_FLAGS)
    assert "-DGGML_NATIVE=ON" not in info["cmake_flags"]
    probe = info["amx_probe"]  # recorded, whatever it found, in the probe's own words
    assert probe in ("not advertised", "executes") or probe.startswith(
        ("faults (", "refused (", "unknown ("))
