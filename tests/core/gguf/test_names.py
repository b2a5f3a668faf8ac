"""How mesh-llm's writer routes a tensor by name (writer.md): only layer, embedding, final norm
and output tensors are owned; anything else is the "metadata" role, copied everywhere."""

from __future__ import annotations

import pytest

from meshcert.core.gguf.names import is_metadata_role, tensor_role, writer_layer_of


@pytest.mark.parametrize(("name", "role"), [
    ("blk.3.attn_q.weight", "layer"),
    ("cache_k_l3", "layer"),
    ("token_embd.weight", "embedding"),
    ("per_layer_token_embd.weight", "embedding"),
    ("output.weight", "output"),
    ("output.bias", "output"),
    ("output_norm.weight", "final_norm"),
    ("output_norm.bias", "final_norm"),
    ("rope_freqs.weight", "metadata"),
    ("rope_factors_long.weight", "metadata"),
    ("position_embd.weight", "metadata"),
    ("token_embd_norm.weight", "metadata"),
])
def test_the_writers_role_of_a_tensor_name(name: str, role: str) -> None:
    assert tensor_role(name) == role
    assert is_metadata_role(name) == (role == "metadata")


def test_the_writer_routes_cache_tensors_to_their_layer() -> None:
    assert writer_layer_of("cache_v_l12") == 12 and writer_layer_of("blk.7.ffn_up.weight") == 7
    assert writer_layer_of("rope_freqs.weight") is None
