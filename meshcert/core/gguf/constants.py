"""gguf-py's tables (quant block sizes, type names, architectures, tensor names) as plain data,
without gguf-py's start-up.

`import gguf` runs the package's `__init__`, which loads numpy, the reader, the writer and the
metadata helpers (about 130 ms of every `meshcert models certify`). So the tables meshcert reads
are generated into the repository from gguf's public module by scripts/generate_gguf_tables.py
(meshcert.core.gguf.gguf_tables: plain literals, byte-compiled like any module) and only given
their final shapes here. Nothing is executed from gguf and nothing is written at import.
tests/core/gguf/test_constants.py checks that the generated tables equal the installed gguf's,
so upgrading gguf without regenerating them fails the tests. Keys are the enums' integer values
(an IntEnum member hashes and compares as its value, so lookups with either work).
"""

from __future__ import annotations

from meshcert.core.gguf import gguf_tables

GGML_QUANT_SIZES: dict[int, tuple[int, int]] = gguf_tables.GGML_QUANT_SIZES
GGML_TYPE_NAMES: dict[int, str] = gguf_tables.GGML_TYPE_NAMES
MODEL_ARCH_NAMES: dict[int, str] = gguf_tables.MODEL_ARCH_NAMES
MODEL_TENSORS: dict[int, frozenset[int]] = {
    arch: frozenset(tensors) for arch, tensors in gguf_tables.MODEL_TENSORS.items()}
TENSOR_NAMES: dict[int, str] = gguf_tables.TENSOR_NAMES
MODEL_TENSOR_IDS: dict[str, int] = gguf_tables.MODEL_TENSOR_IDS

__all__ = ["GGML_QUANT_SIZES", "GGML_TYPE_NAMES", "MODEL_ARCH_NAMES", "MODEL_TENSORS",
           "MODEL_TENSOR_IDS", "TENSOR_NAMES"]
