"""test-backend-ops parameter strings -> canonical string + typed dict."""

from __future__ import annotations

from meshcert.evidence.parsers.params import format_params, parse_params, parse_value, split_top

FFN = ("routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type=q3_K,shexp_gate_type=q4_K,"
       "shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,"
       "n_embd=6144,n_ff=2048,fused_glu=1,weighted_down=0,merged_shexp_gate_up=1")


def test_glm_ffn_consumer_params_are_typed() -> None:
    canon, values = parse_params(FFN)
    assert canon == FFN
    assert values["routed_down_type"] == "q3_K"
    assert values["n_expert"] == 256 and isinstance(values["n_expert"], int)
    assert values["merged_shexp_gate_up"] == 1          # bools print as 0/1 -> int
    assert list(values) == [item.split("=")[0] for item in FFN.split(",")]   # order kept


def test_arrays_keep_commas_inside_brackets() -> None:
    canon, values = parse_params(
        "type_a=q2_K,type_b=f32,m=4096,n=1,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3]")
    assert values["bs"] == (1, 1)
    assert values["per"] == (0, 1, 2, 3)
    assert values["type_b"] == "f32"
    assert canon.endswith("per=[0,1,2,3]")


def test_blanks_are_canonicalised_and_floats_parsed() -> None:
    canon, values = parse_params(" type=f32 , ne=[4096, 1,1,1], eps=0.000001, scale=1e-05,v=-3 ")
    assert canon == "type=f32,ne=[4096,1,1,1],eps=0.000001,scale=1e-05,v=-3"
    assert values == {"type": "f32", "ne": (4096, 1, 1, 1), "eps": 1e-06, "scale": 1e-05,
                      "v": -3}


def test_empty_odd_and_nested_values() -> None:
    assert parse_params("") == ("", {})
    assert parse_params("flag")[1] == {"flag": ""}
    assert parse_value("[[1,2],[3]]") == ((1, 2), (3,))
    assert parse_value("[]") == ()
    assert parse_value("inf") == "inf"          # words stay text
    assert split_top("a=[1,2],b=(3,4),c=5") == ["a=[1,2]", "b=(3,4)", "c=5"]


def test_format_params_round_trips() -> None:
    _, values = parse_params("ne=[4096,1,1,1],fused_glu=1,type=q4_K")
    assert format_params(values) == "ne=[4096,1,1,1],fused_glu=1,type=q4_K"
    assert format_params({"flash_attn": True, "tensor_split": None}) == "flash_attn=1,tensor_split="
