"""Tokenizer arrays, special token ids, vocabulary vs embedding rows, hparams vs tensor shapes.

llama.cpp's vocabulary loader trusts what it reads: it indexes ``scores`` and ``token_type`` by
token id without checking their length or element type (u8 scores, short score arrays) and uses
special token ids as indexes (CVE-2025-49847 class). Its model loader then demands that every
tensor has exactly the shape the hyperparameters imply. This check makes both demands
header-only, on the package as a whole:

- the tokenizer is read from metadata.gguf (else the first file carrying
  ``tokenizer.ggml.tokens``); its copies in other fragments are `tokenizer_copies`' job;
- ``token_embd.weight`` and ``output.weight`` may live in other fragments. A v2 metadata carrier
  lists every tensor in its own directory, so when the tokenizer's file lists a tensor, that
  entry is used and the other files are not consulted (one finding, not two). No
  ``output.weight`` anywhere means tied embeddings, which is allowed;
- GGUF dims are ne[0] first: ``token_embd.weight`` is ``(n_embd, n_vocab)``, ``attn_q.weight``
  ``(n_embd, n_head * head_dim)``, ``attn_output.weight`` ``(n_head * head_dim_v, n_embd)``,
  ``ffn_down.weight`` ``(n_ff, n_embd)``;
- head_dim is ``{arch}.attention.key_length`` / ``value_length`` when given (Gemma 3: 256 with
  n_embd 640 and 4 heads), else n_embd / n_head, as in llama.cpp; per-layer arrays of head
  counts or feed-forward lengths are indexed by layer;
- attention and feed-forward shape rules hold only for architectures whose tensors have the
  plain llama layout (`PLAIN_ATTENTION`, `PLAIN_FFN`): others fuse or gate those tensors
  (phi3's ffn_up is 2*n_ff wide, qwen3next's attn_q carries a gate, MLA has no attn_q), so
  there only n_embd vs the embedding and output tensors is checked;
- ``{arch}.block_count`` vs the blocks present applies to a file holding a whole model's tensor
  directory: a single file or split set audited without a manifest, or a v2 carrier. A v1
  package's layer fragments are checked against the manifest by the layer checks.

Long arrays arrive as `ArraySummary` (element type and length); short ones (at most 4096 items,
smaller than any real vocabulary) as lists, whose element type is inferred from the Python
values (str, float, int): there f64 scores or u8 token types are not told apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from meshcert.certify.checks import register
from meshcert.certify.manifest_model import is_int
from meshcert.certify.package_gguf.carriers import Carrier, carriers
from meshcert.certify.package_gguf.fragments import capped, preview
from meshcert.certify.view import PackageView
from meshcert.core.findings import Finding, finding
from meshcert.core.gguf.model import ArraySummary, TensorInfo
from meshcert.core.gguf.names import layer_of

TOKENS = "tokenizer.ggml.tokens"
SCORES = "tokenizer.ggml.scores"
TOKEN_TYPE = "tokenizer.ggml.token_type"
MERGES = "tokenizer.ggml.merges"
STRING, FLOAT32, INT32, UINT32 = 8, 6, 5, 4
TYPE_NAMES = {0: "u8", 1: "i8", 2: "u16", 3: "i16", 4: "u32", 5: "i32", 6: "f32", 7: "bool",
              8: "string", 9: "array", 10: "u64", 11: "i64", 12: "f64"}
PLAIN_ATTENTION = frozenset({"llama", "gemma", "gemma2", "gemma3", "qwen2", "qwen3", "qwen2moe",
                             "qwen3moe", "granite", "granitemoe", "smollm3", "olmo2", "mistral3"})
PLAIN_FFN = frozenset({"llama", "gemma", "gemma2", "gemma3", "qwen2", "qwen3", "granite",
                       "smollm3", "olmo2", "mistral3"})


@register("tokenizer", order=340, codes=[
    "tokenizer_array_invalid", "special_token_out_of_range", "vocab_embedding_rows_mismatch",
    "hparam_shape_mismatch",
])
def check_tokenizer(view: PackageView) -> Iterator[Finding]:
    cs = carriers(view, projectors=False)
    ref = next((c for c in cs if c.is_metadata and TOKENS in c.header.kv), None) \
        or next((c for c in cs if TOKENS in c.header.kv), None)
    if ref is not None:
        yield from _arrays(ref)
        tokens = ref.header.kv[TOKENS]
        n_tokens = _length(tokens)
        if _element_type(tokens) == STRING and n_tokens:  # ids and rows need a vocabulary
            yield from _special_ids(ref, n_tokens)
            yield from _vocab_rows(cs, ref, n_tokens)
    yield from capped(list(_hparams(cs, whole_directory=view.package_format == "v2")))
    yield from _block_count(view, cs)


# --- arrays --------------------------------------------------------------------------------

def _element_type(value: Any) -> int | None:
    """The GGUF element type of an array value (inferred for a materialized list)."""
    if isinstance(value, ArraySummary):
        return value.element_type
    if not isinstance(value, list) or not value:
        return None
    if all(isinstance(v, str) for v in value):
        return STRING
    if all(isinstance(v, float) for v in value):
        return FLOAT32
    if all(is_int(v) for v in value):
        return INT32
    return -1


def _length(value: Any) -> int | None:
    if isinstance(value, ArraySummary):
        return value.length
    return len(value) if isinstance(value, list) else None


def _type_name(value: Any) -> str:
    if isinstance(value, ArraySummary):
        return f"an array of {TYPE_NAMES.get(value.element_type, value.element_type)}"
    if isinstance(value, list):
        kind = _element_type(value)
        if kind == -1:
            return "an array of mixed values"
        if kind == INT32:
            return "an array of integers"
        return f"an array of {TYPE_NAMES.get(kind or -2, 'nothing')}"
    return f"a {type(value).__name__} scalar"


def _arrays(ref: Carrier) -> Iterator[Finding]:
    kv = ref.header.kv
    tokens = kv[TOKENS]

    def bad(key: str, what: str) -> Finding:
        return finding("tokenizer_array_invalid", f"{ref.path}: {key} {what}", path=ref.path,
                       layer_index=ref.layer_index)

    n_tokens = _length(tokens)
    if _element_type(tokens) != STRING or not n_tokens:
        yield bad(TOKENS, f"must be a non-empty array of strings, found {_type_name(tokens)}")
        return
    for key, wanted, label in ((SCORES, FLOAT32, "f32"), (TOKEN_TYPE, INT32, "i32")):
        if key not in kv:
            continue
        value = kv[key]
        length = _length(value)
        # a float list stands for f32: GGUF float arrays decode to Python floats
        if _element_type(value) != wanted:
            yield bad(key, f"must be an array of {label}, found {_type_name(value)} (llama.cpp "
                      f"reads it as {label} without checking)")
        elif length != n_tokens:
            yield bad(key, f"has {length} entries for {n_tokens} tokens (llama.cpp reads one "
                      "per token, past the end of a short array)")
    merges = kv.get(MERGES, [])
    if merges != [] and _element_type(merges) != STRING:
        yield bad(MERGES, f"must be an array of strings, found {_type_name(merges)}")


def _special_ids(ref: Carrier, n_tokens: int) -> Iterator[Finding]:
    """Ids are u32 (llama.cpp's loader refuses another type) and index the vocabulary."""
    for key, value in ref.header.kv.items():
        if not (key.startswith("tokenizer.ggml.") and key.endswith("_token_id")):
            continue
        kind = ref.header.kv_types.get(key, UINT32)
        if not is_int(value) or kind != UINT32:
            yield finding("special_token_out_of_range", f"{ref.path}: {key} is {value!r} of "
                          f"type {TYPE_NAMES.get(kind, kind)}, not a u32 token id", path=ref.path,
                          layer_index=ref.layer_index)
        elif not 0 <= value < n_tokens:
            yield finding("special_token_out_of_range", f"{ref.path}: {key} = {value} is "
                          f"outside the vocabulary of {n_tokens} tokens (0..{n_tokens - 1})",
                          path=ref.path, layer_index=ref.layer_index)


# --- vocabulary vs embedding rows ----------------------------------------------------------

def _find_tensor(cs: list[Carrier], ref: Carrier, name: str) -> tuple[Carrier, TensorInfo] | None:
    """The tensor's info from the tokenizer's own file when it lists it (v2 carrier, single
    file), else from the first other file that does."""
    for carrier in [ref, *(c for c in cs if c is not ref)]:
        for tensor in carrier.header.tensors:
            if tensor.name == name:
                return carrier, tensor
    return None


def _vocab_rows(cs: list[Carrier], ref: Carrier, n_tokens: int) -> Iterator[Finding]:
    for name in ("token_embd.weight", "output.weight"):
        found = _find_tensor(cs, ref, name)
        if found is None:
            continue  # no output.weight: tied embeddings; no token_embd: another check's job
        carrier, tensor = found
        rows = tensor.shape[1] if len(tensor.shape) >= 2 else None
        if rows != n_tokens:
            shown = f"{rows} rows" if rows is not None else f"shape {list(tensor.shape)}"
            yield finding("vocab_embedding_rows_mismatch", f"{carrier.path}: {name} has "
                          f"{shown} (ne[1]) but {ref.path} has {n_tokens} tokens",
                          path=carrier.path, layer_index=carrier.layer_index)


# --- hparams vs shapes ---------------------------------------------------------------------

@dataclass(frozen=True)
class _Hparams:
    arch: str
    kv: dict[str, Any]
    source: str  # path of the file the values come from

    def get(self, name: str, layer: int | None = None) -> int | None:
        value = self.kv.get(f"{self.arch}.{name}")
        if isinstance(value, list) and layer is not None and 0 <= layer < len(value):
            value = value[layer]
        return value if is_int(value) and value > 0 else None


def _hparams_for(carrier: Carrier, fallback: Carrier | None) -> _Hparams | None:
    """A file's own hyperparameters when it carries them, else the metadata file's."""
    for source in (carrier, fallback):
        if source is None:
            continue
        arch = source.header.architecture
        if arch and f"{arch}.embedding_length" in source.header.kv:
            return _Hparams(arch, source.header.kv, source.path)
    return None


def _expected_shapes(hp: _Hparams, tensor: TensorInfo) -> list[tuple[str, tuple[int, ...]]]:
    """(what, expected shape) for the tensor, from the hyperparameters that determine it."""
    n_embd = hp.get("embedding_length")
    if n_embd is None:
        return []
    name = tensor.name
    if name in ("token_embd.weight", "output.weight"):  # ne[1] is the vocabulary's business
        shape = tensor.shape
        return [("embedding_length", (n_embd, shape[1]))] if len(shape) == 2 else []
    layer = layer_of(name)
    suffix = name.split(".", 2)[2] if layer is not None else ""
    out: list[tuple[str, tuple[int, ...]]] = []
    if hp.arch in PLAIN_ATTENTION and suffix in ("attn_q.weight", "attn_k.weight",
                                                 "attn_v.weight", "attn_output.weight"):
        n_head = hp.get("attention.head_count", layer)
        if n_head is None:
            return []
        n_head_kv = hp.get("attention.head_count_kv", layer) or n_head
        head_k = hp.get("attention.key_length") or n_embd // n_head
        head_v = hp.get("attention.value_length") or n_embd // n_head
        what = "embedding_length, attention.head_count, head_count_kv, key/value_length"
        out.append((what, {
            "attn_q.weight": (n_embd, n_head * head_k),
            "attn_k.weight": (n_embd, n_head_kv * head_k),
            "attn_v.weight": (n_embd, n_head_kv * head_v),
            "attn_output.weight": (n_head * head_v, n_embd),
        }[suffix]))
    if hp.arch in PLAIN_FFN and suffix in ("ffn_gate.weight", "ffn_up.weight",
                                           "ffn_down.weight"):
        n_ff = hp.get("feed_forward_length", layer)
        if n_ff is not None:
            out.append(("embedding_length, feed_forward_length",
                        (n_ff, n_embd) if suffix == "ffn_down.weight" else (n_embd, n_ff)))
    return out


def _hparams(cs: list[Carrier], *, whole_directory: bool) -> Iterator[Finding]:
    """One finding per (tensor pattern, expected, found), naming the files it occurs in. A v2
    carrier's directory lists every tensor, so it alone is checked (no second report from the
    payload fragments); a v1 metadata.gguf may hold metadata-role tensors (rope_freqs.weight)
    but never the model's directory, so there every fragment is checked."""
    metadata = next((c for c in cs if c.is_metadata), None)
    scope = [metadata] if (whole_directory and metadata is not None
                           and metadata.header.tensors) else cs
    groups: dict[tuple[str, str, tuple[int, ...], tuple[int, ...]],
                 list[tuple[str, str, str]]] = defaultdict(list)
    for carrier in scope:
        hp = _hparams_for(carrier, metadata)
        if hp is None:
            continue
        for tensor in carrier.header.tensors:
            for what, expected in _expected_shapes(hp, tensor):
                if tuple(tensor.shape) != expected:
                    pattern = tensor.name if layer_of(tensor.name) is None else \
                        "blk.N." + tensor.name.split(".", 2)[2]
                    groups[(pattern, what, expected, tuple(tensor.shape))].append(
                        (tensor.name, carrier.path, hp.source))
    for (pattern, what, expected, shape), hits in groups.items():
        names = sorted({n for n, _, _ in hits})
        files = sorted({p for _, p, _ in hits})
        yield finding("hparam_shape_mismatch", f"{pattern} has shape {list(shape)} but {what} "
                      f"(from {hits[0][2]}) imply {list(expected)} (GGUF order, ne[0] first): "
                      f"{len(hits)} tensor(s) in {len(files)} file(s), {preview(names, 3)}",
                      path=hits[0][1])


def _block_count(view: PackageView, cs: list[Carrier]) -> Iterator[Finding]:
    """Blocks present vs {arch}.block_count where one directory holds the whole model."""
    if view.manifest is None:
        scopes = [cs]  # a single file or a split set: every header is part of one model
    else:
        scopes = [[c] for c in cs if view.package_format == "v2" and c.is_metadata
                  and c.header.tensors]  # a v2 carrier (v1's metadata.gguf is no directory)
    for scope in scopes:
        if not scope:
            continue
        head = scope[0]
        arch = head.header.architecture
        declared = head.header.kv.get(f"{arch}.block_count") if arch else None
        if not is_int(declared):
            continue
        present = {layer for c in scope for t in c.header.tensors
                   if (layer := layer_of(t.name)) is not None}
        if not present:
            continue
        inside = {b for b in present if b < declared}
        n_missing = max(declared, 0) - len(inside)
        extra = sorted(present - inside)
        if n_missing or extra:
            first = ", ".join(_first_missing(inside, declared)) + (", ..." if n_missing > 6 else "")
            parts = ([f"no tensors for {n_missing} block(s) ({first})"] if n_missing else []) \
                + ([f"tensors for block(s) {preview([str(b) for b in extra])} past it"]
                   if extra else [])
            yield finding("hparam_shape_mismatch", f"{head.path}: {arch}.block_count is "
                          f"{declared} but the tensor directory has {' and '.join(parts)}",
                          path=head.path)


def _first_missing(present: set[int], declared: int, limit: int = 6) -> list[str]:
    """The first `limit` block indexes below `declared` that are absent, without building
    range(declared) (a hostile block_count can be 2**32)."""
    out: list[str] = []
    index = 0
    while len(out) < limit and index < declared:
        if index not in present:
            out.append(str(index))
        index += 1
    return out
