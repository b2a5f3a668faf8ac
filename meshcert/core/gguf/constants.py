"""gguf-py's tables (quant block sizes, type names, architectures, tensor names) as plain data,
without gguf-py's start-up.

`import gguf` runs the package's `__init__`, which loads numpy, the reader, the writer and the
metadata helpers (about 130 ms). `gguf/constants.py` alone needs only the standard library, but
executing it builds some twenty enums: about 8 ms of every `meshcert models certify`. So the
tables meshcert reads are derived from that file once per version of it -- the SHA-256 of its
bytes names a JSON snapshot under the user cache dir (`gguf-tables/`, meshcert.core.cache_paths)
-- and read back as plain dicts (about 2 ms). When gguf is already imported, its own tables are
used; when the snapshot cannot be read or written, the file is executed as before. The snapshot
is only ever derived, never edited, and tests/core/gguf/test_constants.py compares it with
the live tables. Keys are the enums' integer values (an IntEnum member hashes and compares as
its value, so lookups with either work).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from meshcert.core.atomic import write_atomic
from meshcert.core.cache_paths import GGUF_TABLES, cache_dir

_PRIVATE_NAME = "meshcert.core.gguf._gguf_py_constants"
_TABLES = ("quant_sizes", "type_names", "arch_names", "arch_tensors", "tensor_names",
           "tensor_ids")


def constants_file() -> Path:
    package = importlib.util.find_spec("gguf")  # locates the package without importing it
    locations = package.submodule_search_locations if package else None
    if not locations:
        raise ImportError("the gguf package (gguf-py) is not installed")
    return Path(list(locations)[0], "constants.py")


def execute_constants() -> ModuleType:
    """gguf's own `gguf.constants` if imported, else that one file executed on its own."""
    for name in ("gguf.constants", _PRIVATE_NAME):
        if name in sys.modules:
            return sys.modules[name]
    spec = importlib.util.spec_from_file_location(_PRIVATE_NAME, constants_file())
    if spec is None or spec.loader is None:
        raise ImportError("gguf/constants.py not found in the gguf package")
    module = importlib.util.module_from_spec(spec)
    sys.modules[_PRIVATE_NAME] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[_PRIVATE_NAME]
        raise
    return module


def derive_tables(constants: ModuleType) -> dict[str, Any]:
    """The plain tables, from gguf's constants module (JSON-ready: string keys)."""
    return {
        "quant_sizes": {str(int(k)): list(v) for k, v in constants.GGML_QUANT_SIZES.items()},
        "type_names": {str(int(t)): t.name for t in constants.GGMLQuantizationType},
        "arch_names": {str(int(k)): str(v) for k, v in constants.MODEL_ARCH_NAMES.items()},
        "arch_tensors": {str(int(k)): sorted(int(t) for t in v)
                         for k, v in constants.MODEL_TENSORS.items()},
        "tensor_names": {str(int(k)): str(v) for k, v in constants.TENSOR_NAMES.items()},
        "tensor_ids": {t.name: int(t) for t in constants.MODEL_TENSOR},
    }


def snapshot_path(source: bytes) -> Path:
    return cache_dir(GGUF_TABLES) / f"{hashlib.sha256(source).hexdigest()[:32]}.json"


def _load_tables() -> dict[str, Any]:
    if "gguf.constants" in sys.modules:
        return derive_tables(sys.modules["gguf.constants"])
    try:
        source: bytes | None = constants_file().read_bytes()
    except OSError:
        source = None
    if source is not None:
        cached = _read_snapshot(snapshot_path(source))
        if cached is not None:
            return cached
    tables = derive_tables(execute_constants())
    if source is not None:
        _save(tables, snapshot_path(source))
    return tables


def _read_snapshot(path: Path) -> dict[str, Any] | None:
    try:
        tables = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(tables, dict) and all(isinstance(tables.get(k), dict) for k in _TABLES):
        return tables
    return None


def _save(tables: dict[str, Any], path: Path) -> None:
    with contextlib.suppress(OSError):  # a read-only cache: the next run executes the file
        write_atomic(path, json.dumps(tables))


_tables = _load_tables()
GGML_QUANT_SIZES: dict[int, tuple[int, int]] = {
    int(k): (int(v[0]), int(v[1])) for k, v in _tables["quant_sizes"].items()}
GGML_TYPE_NAMES: dict[int, str] = {int(k): str(v) for k, v in _tables["type_names"].items()}
MODEL_ARCH_NAMES: dict[int, str] = {int(k): str(v) for k, v in _tables["arch_names"].items()}
MODEL_TENSORS: dict[int, frozenset[int]] = {
    int(k): frozenset(int(t) for t in v) for k, v in _tables["arch_tensors"].items()}
TENSOR_NAMES: dict[int, str] = {int(k): str(v) for k, v in _tables["tensor_names"].items()}
MODEL_TENSOR_IDS: dict[str, int] = {str(k): int(v) for k, v in _tables["tensor_ids"].items()}
del _tables

__all__ = ["GGML_QUANT_SIZES", "GGML_TYPE_NAMES", "MODEL_ARCH_NAMES", "MODEL_TENSORS",
           "MODEL_TENSOR_IDS", "TENSOR_NAMES"]
