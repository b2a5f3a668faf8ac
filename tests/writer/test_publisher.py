"""Publisher metadata decided before writing (meshcert.writer.publisher): mesh-llm v0.79's ids,
paths,
roles and order, its refusals and messages, the typed defaults it derives from realistic
config.json / hf_quant_config.json files, and the config.json geometry gate with meshcert's one
exception (the NextN block a GGUF counts and HF's num_hidden_layers leaves out)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from meshcert.core.errors import Refused
from meshcert.writer.publisher import PublisherInput, combine, plan_publisher, read_local

REPO = "Qwen/Qwen3-8B"
REV = "b968826d9c46dd6066d109eabc6255188de91218"
# the tiny llama source's geometry (meshcert.testing.llama_spec)
GGUF_KV: dict[str, Any] = {"general.architecture": "llama", "llama.block_count": 4,
                           "llama.embedding_length": 64, "llama.attention.head_count": 4,
                           "llama.attention.head_count_kv": 4, "llama.context_length": 256}

# The shape of Qwen/Qwen3-8B's config.json (its keys and dtype), with the tiny model's numbers
QWEN3_CONFIG: dict[str, Any] = {
    "architectures": ["Qwen3ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
    "bos_token_id": 151643, "eos_token_id": 151645, "head_dim": 16, "hidden_act": "silu",
    "hidden_size": 64, "initializer_range": 0.02, "intermediate_size": 128,
    "max_position_embeddings": 256, "max_window_layers": 4, "model_type": "qwen3",
    "num_attention_heads": 4, "num_hidden_layers": 4, "num_key_value_heads": 4,
    "rms_norm_eps": 1e-06, "rope_scaling": None, "rope_theta": 1000000,
    "sliding_window": None, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
    "transformers_version": "4.51.0", "use_cache": True, "use_sliding_window": False,
    "vocab_size": 320}


def doc(basename: str, value: Any) -> PublisherInput:
    data = value if isinstance(value, bytes) else json.dumps(value, indent=2).encode()
    return PublisherInput(basename, f"/in/{basename}", data)


def plan(*inputs: PublisherInput, repo: str | None = REPO, revision: str | None = REV,
         kv: dict[str, Any] | None = None) -> Any:
    return plan_publisher(list(inputs), repo=repo, revision=revision,
                          gguf_kv=GGUF_KV if kv is None else kv, architecture="llama")


def refused(*inputs: PublisherInput, **kw: Any) -> Refused:
    with pytest.raises(Refused) as err:
        plan(*inputs, **kw)
    return err.value


def test_ids_paths_roles_and_order_are_mesh_llms() -> None:
    p = plan(doc("tokenizer_config.json", {}), doc("config.json", QWEN3_CONFIG),
             doc("chat_template.jinja", b"{{ messages }}"), doc("hf_quant_config.json", {}),
             doc("generation_config.json", {"temperature": 0.6}))
    assert [(known.artifact_id, known.package_path) for known, _ in p.files] == [
        ("publisher-tokenizer-config-json", "metadata/tokenizer_config.json"),
        ("publisher-config-json", "metadata/config.json"),
        ("publisher-chat-template-jinja", "metadata/chat_template.jinja"),
        ("publisher-hf-quant-config-json", "metadata/hf_quant_config.json"),
        ("publisher-generation-config-json", "metadata/generation_config.json")]
    assert p.entries[1] == {"role": "model_config", "artifact_id": "publisher-config-json",
                            "source_repo": REPO, "source_revision": REV,
                            "source_path": "config.json"}
    assert [e["role"] for e in p.entries] == ["tokenizer_config", "model_config",
                                              "chat_template", "hf_quant_config",
                                              "generation_config"]  # as given, not sorted


def test_no_publisher_file_plans_nothing() -> None:
    assert plan() is None


@pytest.mark.parametrize(("inputs", "kw", "words"), [
    ([doc("tokenizer.json", {})], {}, "unsupported publisher metadata filename 'tokenizer.json'"),
    ([doc("config.json", QWEN3_CONFIG)], {"repo": None}, "requires a source repo"),
    ([doc("config.json", QWEN3_CONFIG)], {"repo": "  "}, "requires a source repo"),
    ([doc("config.json", QWEN3_CONFIG)], {"revision": "main"},
     "publisher metadata requires a 40-character immutable Hugging Face commit revision"),
    ([doc("config.json", QWEN3_CONFIG)], {"revision": REV[:39]}, "40-character"),
    ([doc("config.json", QWEN3_CONFIG)], {"revision": None}, "40-character"),
    ([doc("config.json", QWEN3_CONFIG), doc("config.json", QWEN3_CONFIG)], {},
     "duplicate publisher metadata file 'config.json'"),
])
def test_refusals_say_what_mesh_llm_says(inputs: list[PublisherInput], kw: dict[str, Any],
                                         words: str) -> None:
    err = refused(*inputs, **kw)
    assert err.code == "publisher_metadata" and words in err.message


def test_an_upper_case_hex_revision_is_accepted_as_mesh_llm_accepts_it() -> None:
    assert plan(doc("config.json", QWEN3_CONFIG), revision=REV.upper()) is not None


def test_a_local_file_with_another_basename_is_refused_before_it_is_read(tmp_path: Path
                                                                         ) -> None:
    with pytest.raises(Refused) as err:
        read_local(str(tmp_path / "special_tokens_map.json"))  # does not even exist
    assert err.value.code == "publisher_metadata"
    with pytest.raises(Refused) as missing:
        read_local(str(tmp_path / "config.json"))
    assert missing.value.code == "usage" and "config.json" in missing.value.message


def test_named_files_come_first_and_win_over_the_ones_picked_up() -> None:
    picked = [PublisherInput(name, f"hf://x/{name}", b"{}", picked_up=True)
              for name in ("config.json", "generation_config.json")]
    mine = doc("config.json", QWEN3_CONFIG)
    assert combine([mine], picked) == [mine, picked[1]]
    with pytest.raises(Refused) as err:
        combine([mine, mine], picked)
    assert "duplicate publisher metadata file" in err.value.message


# --- typed defaults (§2.3) ---------------------------------------------------------------------
def test_qwen3s_torch_dtype_bfloat16_is_the_compute_dtype() -> None:
    p = plan(doc("config.json", QWEN3_CONFIG))
    assert p.defaults == {"compute_dtype": {"dtype": "bf16",
                                            "artifact_id": "publisher-config-json",
                                            "json_path": "/torch_dtype"}}


def test_a_config_without_a_mapped_dtype_still_makes_empty_defaults() -> None:
    auto = {**QWEN3_CONFIG, "torch_dtype": "auto"}  # unmapped: silently ignored
    assert plan(doc("config.json", auto)).defaults == {}
    assert plan(doc("config.json", {"model_type": "qwen3"})).defaults == {}


def test_transformers_5s_dtype_key_is_read_when_torch_dtype_is_absent() -> None:
    cfg = {k: v for k, v in QWEN3_CONFIG.items() if k != "torch_dtype"} | {"dtype": "float16"}
    assert plan(doc("config.json", cfg)).defaults["compute_dtype"]["json_path"] == "/dtype"


def test_a_quantization_config_kv_cache_quant_algo_fp8_is_the_kv_cache_dtype() -> None:
    # hand-made from §2.3's pointer list: a config.json whose quantization_config names an FP8
    # KV cache (as ModelOpt-exported checkpoints write it)
    cfg = {**QWEN3_CONFIG, "quantization_config": {
        "quant_method": "modelopt", "quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}
    p = plan(doc("config.json", cfg))
    assert p.defaults == {
        "compute_dtype": {"dtype": "bf16", "artifact_id": "publisher-config-json",
                          "json_path": "/torch_dtype"},
        "kv_cache_dtype": {"dtype": "fp8", "artifact_id": "publisher-config-json",
                           "json_path": "/quantization_config/kv_cache_quant_algo"}}


def test_modelopts_hf_quant_config_nests_its_kv_algo_under_quantization_and_is_ignored(
        ) -> None:
    modelopt = {"producer": {"name": "modelopt", "version": "0.23.0"},
                "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}
    assert plan(doc("hf_quant_config.json", modelopt)).defaults is None  # nothing declared
    p = plan(doc("config.json", QWEN3_CONFIG), doc("hf_quant_config.json", modelopt))
    assert set(p.defaults) == {"compute_dtype"}


def test_an_hf_quant_config_with_a_top_level_kv_dtype_declares_it() -> None:
    p = plan(doc("hf_quant_config.json", {"kv_cache_dtype": "fp8_e4m3"}))
    assert p.defaults == {"kv_cache_dtype": {"dtype": "fp8_e4m3",
                                             "artifact_id": "publisher-hf-quant-config-json",
                                             "json_path": "/kv_cache_dtype"}}


def test_an_unmapped_kv_cache_dtype_is_refused() -> None:
    # a compressed-tensors kv_cache_scheme object with "type": "float" (§2.3 [infer]: aborts)
    cfg = {**QWEN3_CONFIG, "quantization_config": {
        "quant_method": "compressed-tensors",
        "kv_cache_scheme": {"type": "float", "num_bits": 8, "strategy": "tensor"}}}
    err = refused(doc("config.json", cfg))
    assert err.code == "publisher_defaults"
    assert "unsupported publisher KV-cache dtype 'float'" in err.message
    assert "/quantization_config/kv_cache_scheme" in err.message


def test_two_kv_declarations_must_agree_and_the_first_keeps_its_binding() -> None:
    cfg = {**QWEN3_CONFIG, "kv_cache_dtype": "fp8"}
    same = plan(doc("hf_quant_config.json", {"kv_cache_quant_algo": "FP8"}),
                doc("config.json", cfg))
    assert same.defaults["kv_cache_dtype"] == {"dtype": "fp8",
                                               "artifact_id": "publisher-hf-quant-config-json",
                                               "json_path": "/kv_cache_quant_algo"}
    err = refused(doc("config.json", cfg), doc("hf_quant_config.json", {"kv_cache_dtype": "int8"}))
    assert err.code == "publisher_defaults"
    assert "conflicting publisher kv_cache_dtype declarations" in err.message


def test_the_other_three_files_are_never_read() -> None:
    p = plan(doc("tokenizer_config.json", b"not json at all"),
             doc("generation_config.json", b"[1, 2]"), doc("chat_template.jinja", b"\xff"))
    assert p.defaults is None and len(p.files) == 3


@pytest.mark.parametrize(("data", "words"), [
    (b"[1, 2, 3]", "must hold a JSON object, found a JSON array"),
    (b"{", "is not valid JSON"),
    (b"\xff\xfe{}", "is not UTF-8"),
    (b"[" * 10_000 + b"]" * 10_000, "nests deeper than"),
    (b'{"torch_dtype": NaN}', "is not valid JSON"),
])
def test_a_config_that_is_not_a_json_object_is_refused(data: bytes, words: str) -> None:
    for basename in ("config.json", "hf_quant_config.json"):
        err = refused(doc(basename, data))
        assert err.code == "bad_publisher_file" and words in err.message
        assert f"/in/{basename}" in err.message


# --- geometry (§2.4) ---------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "value", "gguf"), [
    ("num_hidden_layers", 5, "llama.block_count=4"),
    ("hidden_size", 128, "llama.embedding_length=64"),
    ("num_attention_heads", 8, "llama.attention.head_count=4"),
    ("num_key_value_heads", 2, "llama.attention.head_count_kv=4"),
    ("max_position_embeddings", 40960, "llama.context_length=256"),
])
def test_a_config_that_contradicts_the_gguf_is_refused(key: str, value: int, gguf: str) -> None:
    err = refused(doc("config.json", {**QWEN3_CONFIG, key: value}))
    assert err.code == "publisher_config_conflict"
    assert f"publisher config {key}={value} conflicts with GGUF {gguf}" in err.message


def test_only_unsigned_integers_on_both_sides_are_compared() -> None:
    cfg = {**QWEN3_CONFIG, "num_hidden_layers": "4", "hidden_size": 64.0,
           "num_attention_heads": -1, "num_key_value_heads": True}
    assert plan(doc("config.json", cfg)) is not None
    nested = {"text_config": {"num_hidden_layers": 99}, "torch_dtype": "bfloat16"}
    assert plan(doc("config.json", nested)) is not None  # only top-level keys are read


def test_the_mtp_nextn_block_counted_by_the_gguf_only_is_accepted() -> None:
    # GLM-4.x MoE style: the GGUF's block_count counts the NextN block, HF's
    # num_hidden_layers does not (mesh-llm's writer refuses this; meshcert accepts it)
    kv = GGUF_KV | {"llama.block_count": 5, "llama.nextn_predict_layers": 1}
    cfg = {**QWEN3_CONFIG, "num_hidden_layers": 4, "num_nextn_predict_layers": 1}
    assert plan(doc("config.json", cfg), kv=kv).defaults["compute_dtype"]["dtype"] == "bf16"
    err = refused(doc("config.json", {**cfg, "num_hidden_layers": 3}), kv=kv)
    assert "num_hidden_layers=3 conflicts with GGUF llama.block_count=5" in err.message


def test_a_local_file_over_the_size_limit_is_refused_without_reading_it_all(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:

    monkeypatch.setattr("meshcert.writer.publisher.MAX_PUBLISHER_FILE_BYTES", 16)
    big = tmp_path / "tokenizer_config.json"
    big.write_text(json.dumps({"added_tokens_decoder": {str(i): {} for i in range(100)}}))
    with pytest.raises(Refused) as err:
        read_local(str(big))
    assert err.value.code == "bad_publisher_file" and "over the 16 byte limit" in err.value.message
