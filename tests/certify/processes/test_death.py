"""How a dead worker is described: which worker, which model, how, its last stderr lines,
and a hint when the evidence points at a native build the machine cannot run."""

from __future__ import annotations

from pathlib import Path

import pytest

from meshcert.certify.processes import death as death_module
from meshcert.certify.processes.death import WorkerDeath, signal_name, stderr_tail


def test_a_signal_is_named() -> None:
    assert signal_name(-11) == "SIGSEGV" and signal_name(-6) == "SIGABRT"
    assert signal_name(0) is None and signal_name(3) is None


def test_the_stderr_tail_keeps_the_last_non_blank_lines() -> None:
    text = "\n".join(f"line {i}" for i in range(20)) + "\n\n   \n"
    assert stderr_tail(text).splitlines() == [f"line {i}" for i in range(12, 20)]


def test_a_segfault_in_ggmls_amx_kernel_says_so_and_points_at_the_rebuild(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(death_module, "cpu_advertises", lambda flag: False)
    died = WorkerDeath("llama.cpp decode (source)", "/m/SmolLM2.gguf", -11,
                       "ggml_backend_amx_mul_mat: fault")
    text = died.describe()
    assert text.startswith("llama.cpp decode (source) on /m/SmolLM2.gguf was killed by SIGSEGV")
    assert "this CPU advertises AMX" in text and "rebuild llama-cpp-python portable" in text
    assert text.endswith("its last stderr lines: ggml_backend_amx_mul_mat: fault")


def test_a_timeout_and_an_exit_status_are_told_apart() -> None:
    hung = WorkerDeath("llama.cpp decode (source)", "m.gguf", None, timeout_s=30)
    assert hung.how == "outlived its 30 s wall clock and was killed" and hung.signal is None
    exited = WorkerDeath("llama.cpp decode (source)", "m.gguf", 3)
    assert exited.how == "exited with status 3" and exited.hint() is None


def test_cpu_flags_are_read_from_cpuinfo(tmp_path: Path) -> None:
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor\t: 0\nflags\t\t: fpu sse2 avx2 amx_tile amx_int8\n")
    assert death_module.cpu_advertises("amx_tile", str(cpuinfo))
    assert not death_module.cpu_advertises("avx512f", str(cpuinfo))
    assert not death_module.cpu_advertises("amx_tile", str(tmp_path / "missing"))
