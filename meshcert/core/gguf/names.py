"""Tensor-name knowledge the GGUF checks share (data and pure lookups, no I/O).

Which names an architecture may carry comes from the gguf library's own tables
(``gguf.MODEL_TENSORS`` and ``gguf.TENSOR_NAMES``), so it follows the library version installed;
the rest is what the layer-package spec says about ownership and about the GLM-DSA profile.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Literal

from meshcert.core.gguf.constants import (
    MODEL_ARCH_NAMES,
    MODEL_TENSOR_IDS,
    MODEL_TENSORS,
    TENSOR_NAMES,
)

# Suffixes a stored tensor name adds to a gguf.TENSOR_NAMES base name.
TENSOR_SUFFIXES = (".weight", ".bias")

_LAYER_PREFIX = re.compile(r"^blk\.(\d+)\.")
_CACHE_LAYER = re.compile(r"^cache_.*_l(\d+)$")  # the writer's other per-layer name (cache_k_l3)
_NUMBER_COMPONENT = re.compile(r"(?<=\.)\d+(?=\.)")

# Required tensors per artifact role, each only when the architecture lists it at all.
EMBEDDINGS_REQUIRED = ((MODEL_TENSOR_IDS["TOKEN_EMBD"], "token_embd.weight"),)
OUTPUT_REQUIRED = ((MODEL_TENSOR_IDS["OUTPUT_NORM"], "output_norm.weight"),)
# a layer needs blk.<i>.attn_norm.weight
LAYER_REQUIRED = ((MODEL_TENSOR_IDS["ATTN_NORM"], "attn_norm.weight"),)

# NextN / multi-token-prediction tensors live under blk.<i>.nextn.*
NEXTN_COMPONENT = "nextn"

# --- GLM-DSA (profile glm-dsa-v1) ------------------------------------------------------------
GLM_DSA_ARCH = "glm-dsa"
GLM_DSA_SPLIT_ATTENTION = ("attn_k_b", "attn_v_b", "attn_kv_a_mqa")
GLM_DSA_ROUTED_EXPERTS = ("ffn_gate_exps", "ffn_up_exps", "ffn_down_exps")
GLM_DSA_SHARED_EXPERTS = ("ffn_gate_shexp", "ffn_up_shexp", "ffn_down_shexp")
GLM_DSA_INDEXER = ("indexer.k_norm", "indexer.proj", "indexer.attn_k", "indexer.attn_q_b")
GLM_DSA_INDEXER_KEYS = ("attention.indexer.head_count", "attention.indexer.key_length",
                        "attention.indexer.top_k")  # each prefixed with "<arch>."
NEXTN_PREDICT_LAYERS_KEY = "nextn_predict_layers"  # "<arch>.nextn_predict_layers"


# How mesh-llm's package writer routes a tensor by its name (writer.md): a layer's, the
# embeddings', the output head's, the final norm's, or else the "metadata" role, which the v1
# writer copies into every fragment (rope_freqs.weight, ...). Only the first four are owned.
EMBEDDING_NAMES = frozenset({"token_embd.weight", "per_layer_token_embd.weight"})
OUTPUT_NAMES = frozenset({"output.weight", "output.bias"})
FINAL_NORM_NAMES = frozenset({"output_norm.weight", "output_norm.bias"})
TensorRole = Literal["layer", "embedding", "output", "final_norm", "metadata"]


def tensor_role(name: str) -> TensorRole:
    """The writer's role for a tensor name (`blk.N.*` and `cache_*_lN` are layer N)."""
    if layer_of(name) is not None or _CACHE_LAYER.match(name):
        return "layer"
    if name in EMBEDDING_NAMES:
        return "embedding"
    if name in OUTPUT_NAMES:
        return "output"
    if name in FINAL_NORM_NAMES:
        return "final_norm"
    return "metadata"


def is_metadata_role(name: str) -> bool:
    """True for a tensor no artifact owns: the v1 writer copies it into every fragment."""
    return tensor_role(name) == "metadata"


def writer_layer_of(name: str) -> int | None:
    """The layer the writer routes a tensor to (``blk.<i>.*`` or ``cache_*_l<i>``)."""
    match = _LAYER_PREFIX.match(name) or _CACHE_LAYER.match(name)
    return int(match.group(1)) if match else None


def layer_of(name: str) -> int | None:
    """The layer index of a ``blk.<i>.*`` tensor name, None for any other name."""
    match = _LAYER_PREFIX.match(name)
    return int(match.group(1)) if match else None


def strip_suffix(name: str) -> str:
    """The name without its ``.weight``/``.bias`` suffix (unchanged when it has neither)."""
    for suffix in TENSOR_SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def layer_component(name: str) -> str | None:
    """What a layer tensor is, e.g. ``attn_k_b`` for ``blk.3.attn_k_b.weight``."""
    match = _LAYER_PREFIX.match(name)
    return strip_suffix(name[match.end():]) if match else None


def is_nextn(name: str) -> bool:
    """True for a NextN/MTP tensor (``blk.<i>.nextn.*``)."""
    component = layer_component(name)
    return component is not None and component.split(".", 1)[0] == NEXTN_COMPONENT


def name_pattern(name: str) -> str:
    """The name with its block numbers generalized, to group findings: ``blk.{N}.foo.weight``."""
    return _NUMBER_COMPONENT.sub("{N}", name)


@cache
def _arch_enum(arch: str) -> int | None:
    for enum, arch_name in MODEL_ARCH_NAMES.items():
        if arch_name == arch:
            return enum
    return None


@cache
def _arch_tensor_regex(arch: str) -> re.Pattern[str] | None:
    enum = _arch_enum(arch)
    if enum is None:
        return None
    templates = sorted(TENSOR_NAMES[t] for t in MODEL_TENSORS[enum])
    alternatives = [re.escape(t).replace(r"\{bid\}", r"\d+") for t in templates]
    return re.compile("^(?:" + "|".join(alternatives) + ")$")


def is_known_tensor(arch: str, name: str) -> bool | None:
    """Whether the gguf library lists `name` for `arch` (None when the arch is unknown).

    A stored name is a library base name plus ``.weight`` or ``.bias``; any other suffix (or
    none) is not a name the library lists.
    """
    regex = _arch_tensor_regex(arch)
    if regex is None:
        return None
    if not name.endswith(TENSOR_SUFFIXES):
        return False
    return regex.match(strip_suffix(name)) is not None


def arch_has_tensor(arch: str | None, tensor: int) -> bool:
    """Whether the architecture lists the tensor kind (an unknown arch is assumed to)."""
    enum = _arch_enum(arch) if arch else None
    if enum is None:
        return True
    return tensor in MODEL_TENSORS[enum]


def required_tensors(arch: str | None, role: str, layer_index: int | None = None) -> list[str]:
    """Tensor names an artifact of `role` must hold (shared.embeddings, shared.output, layer)."""
    if role == "shared.embeddings":
        table, prefix = EMBEDDINGS_REQUIRED, ""
    elif role == "shared.output":
        table, prefix = OUTPUT_REQUIRED, ""
    elif role == "layer" and layer_index is not None:
        table, prefix = LAYER_REQUIRED, f"blk.{layer_index}."
    else:
        return []
    return [prefix + name for kind, name in table if arch_has_tensor(arch, kind)]
