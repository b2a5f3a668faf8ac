"""Re-open a GGUF with llama.cpp's own parser (libggml-base from llama-cpp-python), no_alloc.

`gguf_init_from_file(path, {no_alloc=true})` parses the header, KV and tensor directory the
way llama.cpp does before loading, without allocating tensor memory. On top, every tensor's
data range must lie inside the file (the parser leaves that to the loader).
"""

from __future__ import annotations

import ctypes
import os
from functools import lru_cache


class _InitParams(ctypes.Structure):
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.c_void_p)]


class LlamaParserUnavailable(RuntimeError):
    pass


@lru_cache(maxsize=1)
def _lib() -> ctypes.CDLL:
    try:
        import llama_cpp
    except ImportError as exc:
        raise LlamaParserUnavailable("llama-cpp-python is not installed (pip install "
                                     "'meshcert[live]')") from exc
    lib_dir = os.path.join(os.path.dirname(llama_cpp.__file__), "lib")
    lib = ctypes.CDLL(os.path.join(lib_dir, "libggml-base.so"))
    lib.gguf_init_from_file.restype = ctypes.c_void_p
    lib.gguf_init_from_file.argtypes = [ctypes.c_char_p, _InitParams]
    lib.gguf_free.argtypes = [ctypes.c_void_p]
    for name, res in (("gguf_get_n_tensors", ctypes.c_int64), ("gguf_get_n_kv", ctypes.c_int64),
                      ("gguf_get_data_offset", ctypes.c_size_t)):
        getattr(lib, name).restype = res
        getattr(lib, name).argtypes = [ctypes.c_void_p]
    for name in ("gguf_get_tensor_offset", "gguf_get_tensor_size"):
        getattr(lib, name).restype = ctypes.c_size_t
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int64]
    return lib


def reopen(path: str) -> tuple[int, int]:
    """(tensor count, KV count) as llama.cpp parses `path`; raises ValueError when it does
    not parse or a tensor's data lies past the end of the file."""
    lib = _lib()
    ctx = lib.gguf_init_from_file(os.fsencode(path), _InitParams(True, None))
    if not ctx:
        raise ValueError(f"llama.cpp's GGUF parser rejects {path}")
    try:
        size = os.path.getsize(path)
        n_tensors = int(lib.gguf_get_n_tensors(ctx))
        base = int(lib.gguf_get_data_offset(ctx))
        for i in range(n_tensors):
            end = base + lib.gguf_get_tensor_offset(ctx, i) + lib.gguf_get_tensor_size(ctx, i)
            if end > size:
                raise ValueError(f"{path}: tensor #{i} ends at byte {end}, past the file's "
                                 f"{size} bytes")
        return n_tensors, int(lib.gguf_get_n_kv(ctx))
    finally:
        lib.gguf_free(ctx)
