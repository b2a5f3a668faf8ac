"""Tiny model definitions: tensor names, shapes and types per architecture (pure data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gguf import GGMLQuantizationType as Q


@dataclass(frozen=True)
class TensorSpec:
    name: str
    shape: tuple[int, ...]  # GGUF order: ne[0] first
    ggml_type: Q = Q.F32


@dataclass
class ModelSpec:
    arch: str
    name: str
    block_count: int
    n_embd: int
    n_vocab: int
    tensors: list[TensorSpec]
    kv: dict[str, Any] = field(default_factory=dict)
    nextn_layers: tuple[int, ...] = ()
    model_id: str = ""
    source_repo: str = ""
    source_file: str = ""


def _tokenizer_kv(n_vocab: int) -> dict[str, Any]:
    """SentencePiece-style vocab: control tokens, byte tokens, then word pieces."""
    tokens = ["<unk>", "<s>", "</s>"]
    types = [2, 3, 3]
    for b in range(256):
        if len(tokens) >= n_vocab:
            break
        tokens.append(f"<0x{b:02X}>")
        types.append(6)
    i = 0
    while len(tokens) < n_vocab:
        tokens.append(f"\u2581w{i}")
        types.append(1)
        i += 1
    return {
        "tokenizer.ggml.model": "llama",
        "tokenizer.ggml.tokens": tokens[:n_vocab],
        "tokenizer.ggml.scores": [float(-i) for i in range(n_vocab)],
        "tokenizer.ggml.token_type": types[:n_vocab],
        "tokenizer.ggml.bos_token_id": 1,
        "tokenizer.ggml.eos_token_id": 2,
        "tokenizer.ggml.unknown_token_id": 0,
        "tokenizer.chat_template": "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}"
        "{% endfor %}<|assistant|>",
    }


def llama_spec(block_count: int = 4, n_embd: int = 64, n_ff: int = 128, n_vocab: int = 320,
               n_head: int = 4, rope_freqs: bool = False) -> ModelSpec:
    """A llama-style dense model (attention + SwiGLU FFN per block). `rope_freqs` adds the
    `rope_freqs.weight` every Llama 3.x GGUF with llama3 rope scaling carries, first, as
    llama.cpp's converter writes it (a "metadata"-role tensor: neither layer, embedding,
    output nor final norm)."""
    t: list[TensorSpec] = []
    if rope_freqs:
        t.append(TensorSpec("rope_freqs.weight", (n_embd // n_head // 2,)))
    t.append(TensorSpec("token_embd.weight", (n_embd, n_vocab)))
    for b in range(block_count):
        p = f"blk.{b}."
        t += [
            TensorSpec(p + "attn_norm.weight", (n_embd,)),
            TensorSpec(p + "attn_q.weight", (n_embd, n_embd), Q.F16),
            TensorSpec(p + "attn_k.weight", (n_embd, n_embd), Q.F16),
            TensorSpec(p + "attn_v.weight", (n_embd, n_embd), Q.F16),
            TensorSpec(p + "attn_output.weight", (n_embd, n_embd), Q.F16),
            TensorSpec(p + "ffn_norm.weight", (n_embd,)),
            TensorSpec(p + "ffn_gate.weight", (n_embd, n_ff), Q.F16),
            TensorSpec(p + "ffn_up.weight", (n_embd, n_ff), Q.F16),
            TensorSpec(p + "ffn_down.weight", (n_ff, n_embd), Q.F16),
        ]
    t += [TensorSpec("output_norm.weight", (n_embd,)),
          TensorSpec("output.weight", (n_embd, n_vocab), Q.F16)]
    kv: dict[str, Any] = {
        "llama.context_length": 256,
        "llama.embedding_length": n_embd,
        "llama.block_count": block_count,
        "llama.feed_forward_length": n_ff,
        "llama.attention.head_count": n_head,
        "llama.attention.head_count_kv": n_head,
        "llama.rope.dimension_count": n_embd // n_head,
        "llama.attention.layer_norm_rms_epsilon": 1e-5,
        "llama.vocab_size": n_vocab,
    }
    kv |= _tokenizer_kv(n_vocab)
    return ModelSpec("llama", "tiny-llama", block_count, n_embd, n_vocab, t, kv,
                     model_id="meshcert/tiny-llama-GGUF:F16", source_repo="meshcert/tiny-llama",
                     source_file="tiny-llama-F16.gguf")


def glm_dsa_spec(block_count: int = 4, n_embd: int = 64, n_expert: int = 8, n_used: int = 2,
                 n_ff_exp: int = 256, n_vocab: int = 320, down_type: Q = Q.Q3_K,
                 nextn_down_type: Q | None = None) -> ModelSpec:
    """A GLM-DSA-style MoE model: split MLA attention, indexer, routed + shared experts, and a
    final NextN/MTP block (the last block), like GLM-5.2's blk.78."""
    nextn = block_count - 1
    t: list[TensorSpec] = [TensorSpec("token_embd.weight", (n_embd, n_vocab))]
    q_lora, kv_lora, head_dim, idx_dim = 32, 32, 16, 16
    for b in range(block_count):
        p = f"blk.{b}."
        t += [
            TensorSpec(p + "attn_norm.weight", (n_embd,)),
            TensorSpec(p + "attn_q_a.weight", (n_embd, q_lora), Q.F16),
            TensorSpec(p + "attn_q_a_norm.weight", (q_lora,)),
            TensorSpec(p + "attn_q_b.weight", (q_lora, 4 * head_dim), Q.F16),
            TensorSpec(p + "attn_kv_a_mqa.weight", (n_embd, kv_lora + head_dim), Q.F16),
            TensorSpec(p + "attn_kv_a_norm.weight", (kv_lora,)),
            TensorSpec(p + "attn_k_b.weight", (head_dim, kv_lora, 4), Q.F16),
            TensorSpec(p + "attn_v_b.weight", (kv_lora, head_dim, 4), Q.F16),
            TensorSpec(p + "attn_output.weight", (4 * head_dim, n_embd), Q.F16),
            TensorSpec(p + "indexer.k_norm.weight", (idx_dim,)),
            TensorSpec(p + "indexer.proj.weight", (n_embd, 4), Q.F16),
            TensorSpec(p + "indexer.attn_k.weight", (n_embd, idx_dim), Q.F16),
            TensorSpec(p + "indexer.attn_q_b.weight", (q_lora, 4 * idx_dim), Q.F16),
            TensorSpec(p + "ffn_norm.weight", (n_embd,)),
            TensorSpec(p + "ffn_gate_inp.weight", (n_embd, n_expert)),
            TensorSpec(p + "exp_probs_b.bias", (n_expert,)),
            TensorSpec(p + "ffn_gate_exps.weight", (n_embd, n_ff_exp, n_expert), Q.F16),
            TensorSpec(p + "ffn_up_exps.weight", (n_embd, n_ff_exp, n_expert), Q.F16),
            TensorSpec(p + "ffn_down_exps.weight", (n_ff_exp, n_embd, n_expert),
                       nextn_down_type if (b == nextn and nextn_down_type) else down_type),
            TensorSpec(p + "ffn_gate_shexp.weight", (n_embd, n_ff_exp), Q.F16),
            TensorSpec(p + "ffn_up_shexp.weight", (n_embd, n_ff_exp), Q.F16),
            TensorSpec(p + "ffn_down_shexp.weight", (n_ff_exp, n_embd), Q.F16),
        ]
        if b == nextn:
            t += [
                TensorSpec(p + "nextn.eh_proj.weight", (2 * n_embd, n_embd), Q.F16),
                TensorSpec(p + "nextn.enorm.weight", (n_embd,)),
                TensorSpec(p + "nextn.hnorm.weight", (n_embd,)),
                TensorSpec(p + "nextn.shared_head_norm.weight", (n_embd,)),
            ]
    t += [TensorSpec("output_norm.weight", (n_embd,)),
          TensorSpec("output.weight", (n_embd, n_vocab), Q.F16)]
    a = "glm-dsa"
    kv: dict[str, Any] = {
        f"{a}.context_length": 4096,
        f"{a}.embedding_length": n_embd,
        f"{a}.block_count": block_count,
        f"{a}.feed_forward_length": n_ff_exp,
        f"{a}.expert_feed_forward_length": n_ff_exp,
        f"{a}.expert_count": n_expert,
        f"{a}.expert_used_count": n_used,
        f"{a}.expert_shared_count": 1,
        f"{a}.attention.head_count": 4,
        f"{a}.attention.head_count_kv": 1,
        f"{a}.attention.q_lora_rank": q_lora,
        f"{a}.attention.kv_lora_rank": kv_lora,
        f"{a}.attention.key_length": kv_lora + head_dim,
        f"{a}.attention.value_length": kv_lora,
        f"{a}.attention.indexer.head_count": 4,
        f"{a}.attention.indexer.key_length": idx_dim,
        f"{a}.attention.indexer.top_k": 768,
        f"{a}.nextn_predict_layers": 1,
        f"{a}.attention.layer_norm_rms_epsilon": 1e-5,
    }
    kv |= _tokenizer_kv(n_vocab)
    return ModelSpec(a, "tiny-glm-dsa", block_count, n_embd, n_vocab, t, kv,
                     nextn_layers=(nextn,), model_id="meshcert/tiny-glm-dsa-GGUF:Q3_K",
                     source_repo="meshcert/tiny-glm-dsa", source_file="tiny-glm-dsa-Q3_K.gguf")


def moe_mtp_spec(block_count: int = 4, n_embd: int = 64, n_vocab: int = 320) -> ModelSpec:
    """The GLM-DSA-style MoE model with its NextN/MTP last block, plus a metadata-role tensor
    (`rope_freqs.weight`, as Llama 3 rope scaling adds): every routing case of the writers."""
    spec = glm_dsa_spec(block_count=block_count, n_embd=n_embd, n_vocab=n_vocab)
    head_dim = 16
    spec.tensors.insert(1, TensorSpec("rope_freqs.weight", (head_dim // 2,)))
    spec.name = "tiny-moe-mtp"
    spec.model_id = "meshcert/tiny-moe-mtp-GGUF:Q3_K"
    spec.source_repo = "meshcert/tiny-moe-mtp"
    spec.source_file = "tiny-moe-mtp-Q3_K.gguf"
    return spec


def mmproj_spec(n_embd: int = 64, image_size: int = 32, patch: int = 8,
                width: int = 32) -> ModelSpec:
    """A multimodal projector (a CLIP-style vision tower and its projection), as the
    `mmproj-*.gguf` files next to a model's quants."""
    t = [TensorSpec("v.patch_embd.weight", (patch, patch, 3, width), Q.F16),
         TensorSpec("v.position_embd.weight", (width, (image_size // patch) ** 2)),
         TensorSpec("v.blk.0.attn_q.weight", (width, width), Q.F16),
         TensorSpec("v.blk.0.ln1.weight", (width,)),
         TensorSpec("v.post_ln.weight", (width,)),
         TensorSpec("mm.0.weight", (width, n_embd), Q.F16),
         TensorSpec("mm.0.bias", (n_embd,))]
    kv: dict[str, Any] = {
        "general.type": "mmproj",
        "clip.has_vision_encoder": True,
        "clip.projector_type": "mlp",
        "clip.vision.image_size": image_size,
        "clip.vision.patch_size": patch,
        "clip.vision.embedding_length": width,
        "clip.vision.feed_forward_length": 2 * width,
        "clip.vision.projection_dim": n_embd,
        "clip.vision.block_count": 1,
        "clip.vision.attention.head_count": 2,
        "clip.vision.attention.layer_norm_epsilon": 1e-6,
    }
    return ModelSpec("clip", "tiny-mmproj", 1, width, 0, t, kv,
                     source_file="mmproj-tiny-F16.gguf")
