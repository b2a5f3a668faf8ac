"""A stand-in llama-cpp-python that dies the way a native llama.cpp build dies on a bad VM.

It is the real llama-cpp-python with two things swapped, both chosen by environment variables
the test sets (so a worker process started by the certifier picks them up):

- `llama_cpp.Llama`: the real class, except that on a model whose path contains
  `MESHCERT_STANDIN_MATCH` the first decode writes a ggml line to stderr and then dies as
  `MESHCERT_STANDIN_MODE` says: `segv` (SIGSEGV, as ggml_backend_amx_mul_mat does on a VM that
  faults on AMX tiles), `abort` (SIGABRT, a GGML_ASSERT), `hang` (never returns), `exit`
  (a non-zero exit);
- `llama_cpp/lib/libggml-base.so`: a C shim over the real library whose `gguf_init_from_file`
  dies the same ways on a path containing `MESHCERT_STANDIN_PARSER_MATCH` (llama.cpp's GGUF
  parser, as `--materialize` runs it).

Put `root` first on PYTHONPATH (for workers) and on sys.path (for the certifier's own lookup of
the package); everything that does not match runs the real llama.cpp.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from meshcert.certify.workers import llama_library

MODE_ENV = "MESHCERT_STANDIN_MODE"
MATCH_ENV = "MESHCERT_STANDIN_MATCH"  # the decode dies on a model path holding this
PARSER_MATCH_ENV = "MESHCERT_STANDIN_PARSER_MATCH"  # the GGUF parser dies on such a path
REAL_LIB_ENV = "MESHCERT_STANDIN_REAL_LIB"

PACKAGE_INIT = '''
import os
import signal
import sys
import time

__path__.append(os.environ["MESHCERT_STANDIN_REAL_PACKAGE"])  # the real submodules
from .llama_cpp import *  # noqa: F401,F403  (the real bindings)
from .llama import Llama as _RealLlama


def _die(mode):
    sys.stderr.write("ggml_backend_amx_mul_mat: stand-in native fault\\n")
    sys.stderr.flush()
    if mode == "segv":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif mode == "abort":
        os.abort()
    elif mode == "hang":
        while True:
            time.sleep(60)
    elif mode == "exit":
        os._exit(3)


class Llama(_RealLlama):
    def __init__(self, *args, model_path="", **kwargs):
        match = os.environ.get("MESHCERT_STANDIN_MATCH")
        self._standin_mode = (os.environ.get("MESHCERT_STANDIN_MODE")
                              if match and match in str(model_path) else None)
        super().__init__(*args, model_path=model_path, **kwargs)

    def eval(self, tokens):
        if self._standin_mode:
            _die(self._standin_mode)
        return super().eval(tokens)
'''

SHIM = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
typedef void (*log_cb)(int, const char *, void *);
struct params { bool no_alloc; void **ctx; };
static void *real;
static void *sym(const char *name) {
    if (!real) real = dlopen(getenv("MESHCERT_STANDIN_REAL_LIB"), RTLD_NOW | RTLD_LOCAL);
    if (!real) abort();
    return dlsym(real, name);
}
static void maybe_die(const char *path) {
    const char *mode = getenv("MESHCERT_STANDIN_MODE");
    const char *match = getenv("MESHCERT_STANDIN_PARSER_MATCH");
    if (!mode || !match || !strstr(path, match)) return;
    fprintf(stderr, "gguf_init_from_file_impl: stand-in native fault\n");
    fflush(stderr);
    if (!strcmp(mode, "segv")) raise(SIGSEGV);
    if (!strcmp(mode, "abort")) abort();
    if (!strcmp(mode, "hang")) for (;;) sleep(60);
    if (!strcmp(mode, "exit")) _exit(3);
}
void ggml_log_set(log_cb c, void *u) { ((void (*)(log_cb, void *))sym("ggml_log_set"))(c, u); }
void *gguf_init_from_file(const char *path, struct params p) {
    maybe_die(path);
    return ((void *(*)(const char *, struct params))sym("gguf_init_from_file"))(path, p);
}
void gguf_free(void *c) { ((void (*)(void *))sym("gguf_free"))(c); }
int64_t gguf_get_n_tensors(void *c) { return ((int64_t (*)(void *))sym("gguf_get_n_tensors"))(c); }
int64_t gguf_get_n_kv(void *c) { return ((int64_t (*)(void *))sym("gguf_get_n_kv"))(c); }
size_t gguf_get_data_offset(void *c) {
    return ((size_t (*)(void *))sym("gguf_get_data_offset"))(c);
}
size_t gguf_get_tensor_offset(void *c, int64_t i) {
    return ((size_t (*)(void *, int64_t))sym("gguf_get_tensor_offset"))(c, i);
}
size_t gguf_get_tensor_size(void *c, int64_t i) {
    return ((size_t (*)(void *, int64_t))sym("gguf_get_tensor_size"))(c, i);
}
"""


def build(root: Path) -> dict[str, str]:
    """Write the stand-in under `root`; the environment a test sets besides mode and match."""
    real_dirs = llama_library.package_dirs()
    real_lib = llama_library.find_library()
    compiler = shutil.which("cc") or shutil.which("gcc")
    if not real_dirs or real_lib is None or compiler is None:
        why = "the stand-in needs llama-cpp-python (the live extra) and a C compiler"
        if os.environ.get("MESHCERT_REQUIRE_LIVE") == "1":
            pytest.fail(f"MESHCERT_REQUIRE_LIVE=1 but {why}", pytrace=False)
        pytest.skip(why)
    package = root / "llama_cpp"
    (package / "lib").mkdir(parents=True)
    (package / "__init__.py").write_text(PACKAGE_INIT, encoding="utf-8")
    (root / "shim.c").write_text(SHIM, encoding="utf-8")
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(package / "lib" / real_lib.name),
                    str(root / "shim.c"), "-ldl"], check=True)
    return {"MESHCERT_STANDIN_REAL_PACKAGE": str(real_dirs[0]), REAL_LIB_ENV: str(real_lib)}
