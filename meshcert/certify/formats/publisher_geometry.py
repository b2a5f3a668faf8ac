"""config.json geometry against the carrier's GGUF metadata (mesh-llm-0.79.md §2.4).

mesh-llm's writer compares five pairs, each only when both sides are unsigned integers, and only
top-level config keys (a nested `text_config` is not read). One documented exception is made
here, not by the writer: an MTP source whose GGUF `block_count` counts the NextN block(s) that
HF's `num_hidden_layers` leaves out (GLM-4.x MoE style): block_count = num_hidden_layers +
nextn_predict_layers. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# (config.json key, GGUF key suffix after "{arch}.")
GEOMETRY_PAIRS: tuple[tuple[str, str], ...] = (
    ("num_hidden_layers", "block_count"),
    ("hidden_size", "embedding_length"),
    ("num_attention_heads", "attention.head_count"),
    ("num_key_value_heads", "attention.head_count_kv"),
    ("max_position_embeddings", "context_length"),
)


@dataclass(frozen=True)
class GeometryDifference:
    config_key: str
    config_value: int
    gguf_key: str
    gguf_value: int
    nextn_layers: int | None = None  # set: the MTP case (GGUF counts the NextN blocks)

    @property
    def is_nextn_block(self) -> bool:
        return self.nextn_layers is not None


def is_unsigned(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def geometry_differences(config: dict[str, Any], gguf_kv: dict[str, Any],
                         architecture: str) -> list[GeometryDifference]:
    """Every pair whose two unsigned-integer sides differ, in the writer's order."""
    out: list[GeometryDifference] = []
    nextn = gguf_kv.get(f"{architecture}.nextn_predict_layers")
    for config_key, suffix in GEOMETRY_PAIRS:
        gguf_key = f"{architecture}.{suffix}"
        ours, theirs = config.get(config_key), gguf_kv.get(gguf_key)
        if not (isinstance(ours, int) and isinstance(theirs, int)
                and is_unsigned(ours) and is_unsigned(theirs)) or ours == theirs:
            continue
        mtp = (suffix == "block_count" and isinstance(nextn, int) and is_unsigned(nextn)
               and nextn > 0 and theirs == ours + nextn)
        out.append(GeometryDifference(config_key, ours, gguf_key, theirs,
                                      nextn if mtp else None))
    return out
