"""llama.cpp's GGUF parser in a worker process (started by `meshcert.certify.workers.llama_gguf` and
`meshcert.certify.workers.llama_reopen`).

Run as ``python -S llama_gguf_worker.py LIBRARY``: it loads libggml-base first, then reads one
JSON request ``{"library": str, "files": [str], "bounds": bool}`` on stdin and writes the line
`READY`, then one JSON verdict per file ``{"accepted": bool, "log": str, "n_tensors": int,
"n_kv": int}``; with ``bounds`` also ``"tensor_end"``, the largest end (absolute byte) of any
tensor's data as llama.cpp locates it, which the caller compares with the file size.
Standard library only (ctypes, json, os, sys), and nothing from the rest of meshcert, so the
interpreter starts in milliseconds: every import here is paid by every certification.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from typing import Any

LOG_CAP = 4000  # characters of llama.cpp log kept per file
READY = {"ready": True}  # the worker's first line, once the library is loaded


class _InitParams(ctypes.Structure):
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


_LogCallback = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)


def tensor_end(lib: ctypes.CDLL, ctx: int, n_tensors: int) -> int:
    base = int(lib.gguf_get_data_offset(ctx))
    ends = [base + lib.gguf_get_tensor_offset(ctx, i) + lib.gguf_get_tensor_size(ctx, i)
            for i in range(n_tensors)]
    return max(ends, default=base)


def run(library: str, paths: list[str], lib: ctypes.CDLL | None = None,
        bounds: bool = False) -> None:
    lib = lib or ctypes.CDLL(library)
    lib.gguf_init_from_file.restype = ctypes.c_void_p
    lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, _InitParams]
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    lib.gguf_get_n_tensors.restype = ctypes.c_int64
    lib.gguf_get_n_tensors.argtypes = [ctypes.c_void_p]
    lib.gguf_get_n_kv.restype = ctypes.c_int64
    lib.gguf_get_n_kv.argtypes = [ctypes.c_void_p]
    if bounds:
        lib.gguf_get_data_offset.restype = ctypes.c_size_t
        lib.gguf_get_data_offset.argtypes = [ctypes.c_void_p]
        for name in ("gguf_get_tensor_offset", "gguf_get_tensor_size"):
            getattr(lib, name).restype = ctypes.c_size_t
            getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int64]
    log: list[str] = []

    def collect(level: int, text: bytes | None, _user: int | None) -> None:
        if text:
            log.append(text.decode("utf-8", errors="replace"))

    callback = _LogCallback(collect)
    lib.ggml_log_set(callback, None)
    sys.stdout.write(json.dumps(READY) + "\n")
    for path in paths:
        log.clear()
        ctx = lib.gguf_init_from_file(os.fsencode(path), _InitParams(True, None))
        item: dict[str, Any] = {"accepted": bool(ctx), "log": "".join(log)[:LOG_CAP]}
        if ctx:
            item["n_tensors"] = int(lib.gguf_get_n_tensors(ctx))
            item["n_kv"] = int(lib.gguf_get_n_kv(ctx))
            if bounds:
                item["tensor_end"] = tensor_end(lib, ctx, item["n_tensors"])
            lib.gguf_free(ctx)
        sys.stdout.write(json.dumps(item) + "\n")
        sys.stdout.flush()


def main() -> None:
    # a lower priority: it boots while the certifier starts, which must not be slowed by it
    os.nice(10)
    lib = ctypes.CDLL(sys.argv[1]) if len(sys.argv) > 1 else None  # loaded before waiting
    request = json.loads(sys.stdin.read())
    if lib is not None and str(request["library"]) != sys.argv[1]:
        lib = None
    run(str(request["library"]), [str(p) for p in request["files"]], lib,
        bounds=bool(request.get("bounds")))


if __name__ == "__main__":
    main()
