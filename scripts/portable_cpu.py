#!/usr/bin/env python3
"""Build flags for llama.cpp that run on the machine that builds them.

Why not ``GGML_NATIVE=ON``: ``-march=native`` turns on every extension the CPU *advertises*,
AMX among them, and ggml then routes quantized matmuls through its AMX backend. Cloud VMs with
Sapphire Rapids-class CPUs advertise ``amx_tile``/``amx_int8`` while some hypervisors fault on
the tile instructions: llama.cpp dies with SIGSEGV in ``ggml_backend_amx_mul_mat`` at the first
decode. CPU inference speed is no claim of meshcert's, so both llama.cpp builds
(the tools, ``scripts/build_llama_cpp.py``; llama-cpp-python, ``scripts/setup_llama_cpp_python.py``)
use a portable baseline instead: ``GGML_NATIVE=OFF``, the AVX2-era extensions only when
``/proc/cpuinfo`` lists them, and AVX-512 and AMX always off.

``amx_probe()`` says whether this CPU really executes an AMX tile multiply (compiled with the
machine's gcc and run in a child, so a fault is a signal, not a crash of ours); the build records
it in its build info. It never switches AMX on: a probe that passes today proves nothing about
the VM the same cache may land on tomorrow.

Standard library only: CI runs it right after ``pip install``.
"""

from __future__ import annotations

import json
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

# ggml option -> the /proc/cpuinfo flags it needs (all of them)
X86_OPTIONAL = (
    ("GGML_SSE42", ("sse4_2",)),
    ("GGML_AVX", ("avx",)),
    ("GGML_AVX2", ("avx2",)),
    ("GGML_FMA", ("fma",)),
    ("GGML_F16C", ("f16c",)),
    ("GGML_BMI2", ("bmi2",)),
)
X86_ALWAYS_OFF = (
    "GGML_AVX_VNNI", "GGML_AVX512", "GGML_AVX512_VBMI", "GGML_AVX512_VNNI", "GGML_AVX512_BF16",
    "GGML_AMX_TILE", "GGML_AMX_INT8", "GGML_AMX_BF16",
)
# what llama_print_system_info may list as compiled in, for a portable build
FORBIDDEN_FEATURES = ("AMX_INT8", "AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16",
                      "AVX_VNNI")


def cpu_flags(cpuinfo: str | None = None) -> set[str]:
    """The first processor's flags from /proc/cpuinfo (empty where there is none)."""
    if cpuinfo is None:
        try:
            cpuinfo = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
        except OSError:
            return set()
    for line in cpuinfo.splitlines():
        if line.startswith(("flags", "Features")) and ":" in line:
            return set(line.split(":", 1)[1].split())
    return set()


def ggml_cpu_flags(flags: set[str] | None = None, machine: str | None = None) -> list[str]:
    """The cmake -D options for ggml's CPU backend on this machine."""
    machine = (machine or platform.machine()).lower()
    options = ["-DGGML_NATIVE=OFF"]
    if machine not in ("x86_64", "amd64", "i686", "i386"):
        return options  # arm64 & co: ggml's portable default
    flags = cpu_flags() if flags is None else flags
    for option, needs in X86_OPTIONAL:
        options.append(f"-D{option}={'ON' if all(f in flags for f in needs) else 'OFF'}")
    options += [f"-D{option}=OFF" for option in X86_ALWAYS_OFF]
    return options


def forbidden_features(system_info: str) -> list[str]:
    """Features a portable build must not have compiled in, as llama.cpp's system info lists
    them (``AMX_INT8 = 1 | AVX512 = 1 | ...``)."""
    found = []
    for part in system_info.replace("\n", "|").split("|"):
        name, _, value = part.partition("=")
        name = name.strip().rsplit(" ", 1)[-1].rsplit(":", 1)[-1].strip()
        if name in FORBIDDEN_FEATURES and value.strip() == "1":
            found.append(name)
    return sorted(set(found))


_AMX_PROBE = r"""
#include <immintrin.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
struct cfg { uint8_t palette, start; uint8_t reserved[14]; uint16_t colsb[16]; uint8_t rows[16]; };
int main(void) {
  if (syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */)) return 3;
  struct cfg c; memset(&c, 0, sizeof c); c.palette = 1;
  for (int i = 0; i < 3; i++) { c.colsb[i] = 64; c.rows[i] = 16; }
  static int8_t a[16 * 64], b[16 * 64]; static int32_t out[16 * 16];
  memset(a, 1, sizeof a); memset(b, 1, sizeof b);
  _tile_loadconfig(&c); _tile_zero(0); _tile_loadd(1, a, 64); _tile_loadd(2, b, 64);
  _tile_dpbssd(0, 1, 2); _tile_stored(0, out, 64); _tile_release();
  return out[0] == 64 ? 0 : 4;
}
"""


def amx_probe() -> str:
    """'not advertised', 'executes', 'faults (SIGSEGV)' / 'refused (...)', or 'unknown (...)'."""
    if "amx_tile" not in cpu_flags():
        return "not advertised"
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        return "unknown (no C compiler to build the probe)"
    with tempfile.TemporaryDirectory(prefix="amx-probe-") as tmp:
        source, binary = Path(tmp, "amx.c"), Path(tmp, "amx")
        source.write_text(_AMX_PROBE, encoding="ascii")
        built = subprocess.run([compiler, "-O1", "-mamx-tile", "-mamx-int8", str(source), "-o",
                                str(binary)], capture_output=True, text=True, check=False)
        if built.returncode != 0:
            return "unknown (the compiler cannot build AMX code)"
        try:
            ran = subprocess.run([str(binary)], capture_output=True, timeout=30, check=False)
        except subprocess.TimeoutExpired:
            return "faults (the probe hung)"
    if ran.returncode == 0:
        return "executes"
    if ran.returncode < 0:
        return f"faults ({signal.Signals(-ran.returncode).name})"
    return f"refused (probe exit {ran.returncode}: the kernel would not enable AMX tiles)"


def main() -> int:
    print(json.dumps({"cmake_flags": ggml_cpu_flags(), "amx": amx_probe(),
                      "machine": platform.machine()}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
