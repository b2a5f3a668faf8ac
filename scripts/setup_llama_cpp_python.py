#!/usr/bin/env python3
"""Install llama-cpp-python (the `live` extra) built so that it runs on this machine.

pip builds llama-cpp-python from its sdist with ggml's native flags, AMX included, and caches the
wheel keyed on the version only: a wheel built with other ``CMAKE_ARGS`` (or on another CPU) is
silently reused. So this script decides for itself:

1. If llama-cpp-python ``VERSION`` is installed, ask it (in a child process) which CPU features
   it was compiled with (``llama_print_system_info``) and, when a real model is cached, decode a
   few tokens with it. A build with AMX or AVX-512 compiled in, or one that dies by a signal,
   is rebuilt; a portable build that decodes is kept (seconds).
2. Otherwise build it from the sdist with the portable flags of ``scripts/portable_cpu.py``,
   bypassing pip's wheel cache (``--no-cache-dir --no-binary``), then check it the same way.

Prints the verdict; exits non-zero only when no working build could be made. The same command
is what `llama_cpp_crashed`'s remediation tells a user to run.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from portable_cpu import forbidden_features, ggml_cpu_flags  # noqa: E402

VERSION = "0.3.36"
REPO = Path(__file__).resolve().parents[1]

_INFO = "import llama_cpp, json; print(json.dumps({'version': llama_cpp.__version__, " \
        "'system_info': llama_cpp.llama_print_system_info().decode()}))"
_DECODE = """
import sys
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=64, n_threads=2, n_gpu_layers=0, verbose=False)
tokens = llm.tokenize(b"The capital of France is", add_bos=True)
llm.eval(tokens)
for _ in range(4):
    llm.eval([int(llm.scores[llm.n_tokens - 1].argmax())])
print("decoded")
"""


def log(message: str) -> None:
    print(f"[setup_llama_cpp_python] {message}", file=sys.stderr, flush=True)


def describe_exit(returncode: int) -> str:
    if returncode < 0:
        try:
            return f"killed by {signal.Signals(-returncode).name}"
        except ValueError:
            return f"killed by signal {-returncode}"
    return f"exit status {returncode}"


def installed_info() -> dict[str, str] | None:
    done = subprocess.run([sys.executable, "-c", _INFO], capture_output=True, text=True,
                          timeout=120, check=False)
    if done.returncode != 0:
        return None
    info: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return info


def smoke_model() -> Path | None:
    """SmolLM2 from the real-model cache, when it is there (never fetched here)."""
    try:
        from tests.support.real_models import SMOLLM2, cache_dir
    except ImportError:
        return None
    path = cache_dir() / SMOLLM2.filename
    return path if path.is_file() and path.stat().st_size == SMOLLM2.size else None


def problems() -> list[str]:
    """Why the installed build must not be used here (empty: keep it)."""
    info = installed_info()
    if info is None:
        return ["llama-cpp-python is not installed (or does not import)"]
    if info["version"] != VERSION:
        return [f"llama-cpp-python {info['version']} is installed, {VERSION} is wanted"]
    bad = forbidden_features(info["system_info"])
    if bad:
        return [f"it was compiled with {', '.join(bad)} (a native build): "
                f"{info['system_info'].strip()}"]
    model = smoke_model()
    if model is not None:
        done = subprocess.run([sys.executable, "-c", _DECODE, str(model)], capture_output=True,
                              text=True, timeout=600, check=False)
        if done.returncode != 0 or "decoded" not in done.stdout:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            return [f"decoding {model.name} {describe_exit(done.returncode)}: {tail}"]
    return []


def rebuild_command() -> tuple[list[str], dict[str, str]]:
    env = dict(os.environ, CMAKE_ARGS=" ".join(ggml_cpu_flags()),
               CMAKE_BUILD_PARALLEL_LEVEL=os.environ.get("MESHCERT_LLAMA_JOBS", "2"))
    argv = [sys.executable, "-m", "pip", "install", "-q", "--no-cache-dir", "--force-reinstall",
            "--no-deps", "--no-binary", "llama-cpp-python", f"llama-cpp-python=={VERSION}"]
    return argv, env


def main() -> int:
    why = problems()
    if not why:
        log(f"llama-cpp-python {VERSION}: a portable build that decodes here; kept")
        return 0
    log(f"rebuilding llama-cpp-python {VERSION}: {why[0]}")
    argv, env = rebuild_command()
    log(f"$ CMAKE_ARGS='{env['CMAKE_ARGS']}' {' '.join(argv[1:])}")
    if subprocess.run(argv, env=env, check=False).returncode != 0:
        log("the build failed")
        return 1
    # its dependencies and the server extra (already satisfied packages are left alone)
    subprocess.run([sys.executable, "-m", "pip", "install", "-q",
                    f"llama-cpp-python[server]=={VERSION}"], check=True)
    why = problems()
    if why:
        log(f"the rebuilt llama-cpp-python still cannot be used here: {why[0]}")
        return 1
    log(f"llama-cpp-python {VERSION}: rebuilt portable and decodes here")
    return 0


if __name__ == "__main__":
    sys.exit(main())
