"""Routing by name alone (writer.md's table)."""

from __future__ import annotations

import pytest

from meshcert.writer.roles import Role, is_nextn, role_of


@pytest.mark.parametrize(("name", "role"), [
    ("blk.0.attn_norm.weight", Role("layer", 0)),
    ("blk.93.ffn_down_exps.weight", Role("layer", 93)),
    ("cache_k_l7", Role("layer", 7)),
    ("token_embd.weight", Role("embedding")),
    ("per_layer_token_embd.weight", Role("embedding")),
    ("output.weight", Role("output")),
    ("output.bias", Role("output")),
    ("output_norm.weight", Role("final_norm")),
    ("output_norm.bias", Role("final_norm")),
    ("rope_freqs.weight", Role("metadata")),
    ("token_embd_norm.weight", Role("metadata")),
    ("blkx.0.weight", Role("metadata")),
])
def test_each_name_goes_where_the_writers_send_it(name: str, role: Role) -> None:
    assert role_of(name) == role


def test_nextn_tensors_are_the_blk_n_nextn_family() -> None:
    assert is_nextn("blk.46.nextn.eh_proj.weight")
    assert not is_nextn("blk.46.attn_norm.weight")
    assert not is_nextn("nextn.eh_proj.weight")
