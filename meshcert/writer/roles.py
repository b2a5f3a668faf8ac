"""Where a tensor goes, by its name alone (writer.md, "How mesh-llm's writer routes tensors").

| names | role |
| `blk.N.*`, `cache_*_lN` | layer N |
| `token_embd.weight`, `per_layer_token_embd.weight` | embedding |
| `output.weight`, `output.bias` | output |
| `output_norm.weight`, `output_norm.bias` | final norm |
| anything else (e.g. `rope_freqs.weight`) | metadata |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

RoleName = Literal["layer", "embedding", "output", "final_norm", "metadata"]

EMBEDDING_NAMES = frozenset({"token_embd.weight", "per_layer_token_embd.weight"})
OUTPUT_NAMES = frozenset({"output.weight", "output.bias"})
FINAL_NORM_NAMES = frozenset({"output_norm.weight", "output_norm.bias"})
_BLOCK = re.compile(r"^blk\.(\d+)\.")
_CACHE = re.compile(r"^cache_.*_l(\d+)$")


@dataclass(frozen=True)
class Role:
    name: RoleName
    layer: int | None = None


def role_of(tensor_name: str) -> Role:
    match = _BLOCK.match(tensor_name) or _CACHE.match(tensor_name)
    if match:
        return Role("layer", int(match.group(1)))
    if tensor_name in EMBEDDING_NAMES:
        return Role("embedding")
    if tensor_name in OUTPUT_NAMES:
        return Role("output")
    if tensor_name in FINAL_NORM_NAMES:
        return Role("final_norm")
    return Role("metadata")


def is_nextn(tensor_name: str) -> bool:
    """A NextN / multi-token-prediction tensor: `blk.N.nextn.*`."""
    match = _BLOCK.match(tensor_name)
    return match is not None and tensor_name[match.end():].startswith("nextn.")
