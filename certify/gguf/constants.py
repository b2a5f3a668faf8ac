"""gguf-py's tables (architectures, tensor names, quant block sizes) without gguf-py's start-up.

`gguf/constants.py` needs only the standard library, but `import gguf` runs the package's
`__init__`, which loads numpy, the reader, the writer and the metadata helpers (about 130 ms, and
every `meshcert models certify` paid it before reading a byte). This module executes that one
file from the installed gguf package under a private name. The enums are IntEnums, so values
compare and hash equal across the two copies; when gguf is already imported, its own
`gguf.constants` is reused as is.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import TYPE_CHECKING

_PRIVATE_NAME = "certify.gguf._gguf_py_constants"


def _load() -> ModuleType:
    for name in ("gguf.constants", _PRIVATE_NAME):
        if name in sys.modules:
            return sys.modules[name]
    package = importlib.util.find_spec("gguf")  # locates the package without importing it
    locations = package.submodule_search_locations if package else None
    if not locations:
        raise ImportError("the gguf package (gguf-py) is not installed")
    spec = importlib.util.spec_from_file_location(_PRIVATE_NAME, f"{list(locations)[0]}/"
                                                  "constants.py")
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


if TYPE_CHECKING:
    from gguf.constants import (
        GGML_QUANT_SIZES,
        MODEL_ARCH_NAMES,
        MODEL_TENSOR,
        MODEL_TENSORS,
        TENSOR_NAMES,
        GGMLQuantizationType,
    )
else:
    _constants = _load()
    GGML_QUANT_SIZES = _constants.GGML_QUANT_SIZES
    MODEL_ARCH_NAMES = _constants.MODEL_ARCH_NAMES
    MODEL_TENSOR = _constants.MODEL_TENSOR
    MODEL_TENSORS = _constants.MODEL_TENSORS
    TENSOR_NAMES = _constants.TENSOR_NAMES
    GGMLQuantizationType = _constants.GGMLQuantizationType

__all__ = ["GGML_QUANT_SIZES", "MODEL_ARCH_NAMES", "MODEL_TENSOR", "MODEL_TENSORS",
           "TENSOR_NAMES", "GGMLQuantizationType"]
