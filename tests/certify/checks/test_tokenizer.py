"""The tokenizer check: one hostile GGUF per rule (written with gguf.GGUFWriter), audited as a
single file and inside a package; tied output, split sets and v2 carriers; real models clean."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from gguf import GGMLQuantizationType as Q

from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from meshcert.testing import glm_dsa_spec, llama_spec, write_source_gguf
from tests.certify.checks.gguf_edits import (
    KV,
    Tensors,
    Typed,
    V,
    edit_package,
    fragment_paths,
    load_safety_findings,
    rewrite_gguf,
    single_file_view,
)
from tests.certify.checks.manifest_edits import real_view
from tests.conftest import PackageFactory, certify_dir, codes
from tests.support.real_models import gemma3_path, smollm2_path

N = 320  # the demo vocabulary (short arrays: materialized lists)
BIG = 4352  # over the reader's 4096-item limit: arrays arrive as ArraySummary
TOK = "tokenizer.ggml."


def _set(**values: object) -> Callable[[KV], None]:
    def edit(kv: KV) -> None:
        for key, value in values.items():
            kv[key.replace("__", ".")] = value
    return edit


def _vocab(n: int) -> Callable[[KV], None]:
    """Keep the first n tokens (and their scores and types)."""
    def edit(kv: KV) -> None:
        for name in ("tokens", "scores", "token_type"):
            typed = kv[TOK + name]
            kv[TOK + name] = Typed(typed.value[:n], typed.vtype, typed.sub_type)
    return edit


def _arch(**values: object) -> Callable[[KV], None]:
    return _set(**{f"llama__{k}": v for k, v in values.items()})


# name -> (vocabulary size of the model, metadata edit, codes it must yield exactly)
CORPUS: dict[str, tuple[int, Callable[[KV], None], set[str]]] = {
    "short_scores": (N, _set(tokenizer__ggml__scores=[0.5] * (N - 1)),
                     {"tokenizer_array_invalid"}),
    "u8_scores": (N, _set(tokenizer__ggml__scores=Typed([1] * N, V.ARRAY, V.UINT8)),
                  {"tokenizer_array_invalid"}),
    "u8_scores_long": (BIG, _set(tokenizer__ggml__scores=Typed([1] * BIG, V.ARRAY, V.UINT8)),
                       {"tokenizer_array_invalid"}),
    "f64_scores_long": (BIG, _set(tokenizer__ggml__scores=Typed([0.5] * BIG, V.ARRAY,
                                                                V.FLOAT64)),
                        {"tokenizer_array_invalid"}),
    "short_scores_long": (BIG, _set(tokenizer__ggml__scores=Typed([0.5] * (BIG - 1), V.ARRAY,
                                                                  V.FLOAT32)),
                          {"tokenizer_array_invalid"}),
    "u8_token_type_long": (BIG, _set(tokenizer__ggml__token_type=Typed([1] * BIG, V.ARRAY,
                                                                       V.UINT8)),
                           {"tokenizer_array_invalid"}),
    "short_token_type": (N, _set(tokenizer__ggml__token_type=[1] * 10),
                         {"tokenizer_array_invalid"}),
    "float_token_type": (N, _set(tokenizer__ggml__token_type=[1.0] * N),
                         {"tokenizer_array_invalid"}),
    "tokens_not_strings": (N, _set(tokenizer__ggml__tokens=Typed(list(range(N)), V.ARRAY,
                                                                 V.INT32)),
                           {"tokenizer_array_invalid"}),
    "tokens_a_string": (N, _set(tokenizer__ggml__tokens="not an array"),
                        {"tokenizer_array_invalid"}),
    "merges_not_strings": (N, _set(tokenizer__ggml__merges=Typed([1, 2], V.ARRAY, V.INT32)),
                           {"tokenizer_array_invalid"}),
    "eos_out_of_range": (N, _set(tokenizer__ggml__eos_token_id=N),
                         {"special_token_out_of_range"}),
    "negative_padding_id": (N, _set(tokenizer__ggml__padding_token_id=Typed(-1, V.INT32)),
                            {"special_token_out_of_range"}),
    "id_typed_i32": (N, _set(tokenizer__ggml__bos_token_id=Typed(1, V.INT32)),
                     {"special_token_out_of_range"}),
    "id_is_a_string": (N, _set(tokenizer__ggml__bos_token_id="1"),
                       {"special_token_out_of_range"}),
    "eos_out_of_range_long": (BIG, _set(tokenizer__ggml__eos_token_id=BIG + 7),
                              {"special_token_out_of_range"}),
    "vocab_shorter_than_embedding": (N, _vocab(N - 8), {"vocab_embedding_rows_mismatch"}),
    "head_count_kv": (N, _arch(attention__head_count_kv=2), {"hparam_shape_mismatch"}),
    "embedding_length": (N, _arch(embedding_length=32), {"hparam_shape_mismatch"}),
    "feed_forward_length": (N, _arch(feed_forward_length=100), {"hparam_shape_mismatch"}),
    "block_count": (N, _arch(block_count=6), {"hparam_shape_mismatch"}),
    "block_count_huge": (N, _arch(block_count=2**32 - 1), {"hparam_shape_mismatch"}),
    "block_count_short": (N, _arch(block_count=2), {"hparam_shape_mismatch"}),
}


def _model(tmp_path: Path, n_vocab: int, edit: Callable[[KV], None],
           edit_tensors: Callable[[Tensors], Tensors] | None = None) -> Path:
    path = write_source_gguf(llama_spec(n_vocab=n_vocab), tmp_path / "model.gguf")
    rewrite_gguf(path, edit, edit_tensors)
    return path


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_hostile_tokenizer_in_a_single_gguf(tmp_path: Path, name: str) -> None:
    n_vocab, edit, expected = CORPUS[name]
    found = load_safety_findings(single_file_view(_model(tmp_path, n_vocab, edit)))
    assert {f.code for f in found} == expected, [f.message for f in found]
    assert all(f.path == "model.gguf" for f in found)


PACKAGE_CASES = sorted(n for n in CORPUS if CORPUS[n][0] == N and not n.startswith("block_count"))


@pytest.mark.parametrize("name", PACKAGE_CASES)
def test_hostile_tokenizer_in_a_package_fails_certify(packages: PackageFactory, name: str
                                                      ) -> None:
    _, edit, expected = CORPUS[name]
    info = packages.build()
    hparam = name in ("head_count_kv", "embedding_length", "feed_forward_length")
    # v1 fragments repeat the hyperparameters: a wrong value is wrong in every copy
    edit_package(info, edit, fragment_paths(info) if hparam else ["shared/metadata.gguf"])
    report = certify_dir(info.root)
    assert report.status == "failed"
    assert expected <= codes(report)
    run = next(c for c in report.checks if c.name == "tokenizer")
    assert run.status == "failed" and set(run.codes) == expected


def test_vocab_vs_embedding_rows_is_checked_across_fragments(packages: PackageFactory) -> None:
    info = packages.build()
    edit_package(info, _vocab(N - 8))
    found = [f for f in certify_dir(info.root).findings
             if f.code == "vocab_embedding_rows_mismatch"]
    # a finding without a path sorts as "" (never an expected path) rather than raising
    assert sorted(f.path or "" for f in found) == ["shared/embeddings.gguf",
                                                   "shared/output.gguf"]
    assert all(f"{N} rows" in f.message and f"{N - 8} tokens" in f.message for f in found)


def _drop_output(tensors: Tensors) -> Tensors:
    return [t for t in tensors if t[0] != "output.weight"]


def _wider_output(tensors: Tensors) -> Tensors:
    wide = np.zeros((N + 5, 64), dtype=np.float16)  # numpy order: ne[1] rows of ne[0]
    return [(n, wide, Q.F16) if n == "output.weight" else (n, d, q) for n, d, q in tensors]


def test_tied_output_is_allowed(tmp_path: Path) -> None:
    path = _model(tmp_path, N, _set(), _drop_output)
    assert load_safety_findings(single_file_view(path)) == []


def test_output_rows_must_match_the_vocabulary(tmp_path: Path) -> None:
    path = _model(tmp_path, N, _set(), _wider_output)
    found = load_safety_findings(single_file_view(path))
    assert [(f.code, f.message) for f in found] == [(
        "vocab_embedding_rows_mismatch",
        f"model.gguf: output.weight has {N + 5} rows (ne[1]) but model.gguf has {N} tokens")]


def test_a_split_set_is_one_model(tmp_path: Path) -> None:
    """Tokenizer in the first shard, tensors in the second: rows and blocks across files."""
    whole = _model(tmp_path, N, _vocab(N - 1))
    first = tmp_path / "m-00001-of-00002.gguf"
    second = tmp_path / "m-00002-of-00002.gguf"
    rewrite_gguf(whole, _set(), lambda tensors: [])
    whole.rename(first)
    write_source_gguf(llama_spec(block_count=3), second)  # 3 blocks, but block_count says 4

    def tensors_only(kv: KV) -> None:  # later shards: tensors only
        for k in list(kv):
            if k.startswith(("llama.", "tokenizer.")):
                kv.pop(k)

    rewrite_gguf(second, tensors_only)
    found = load_safety_findings(single_file_view(first, second))
    assert sorted((f.code, f.path) for f in found) == [
        ("hparam_shape_mismatch", first.name),
        ("vocab_embedding_rows_mismatch", second.name),
        ("vocab_embedding_rows_mismatch", second.name)]
    assert any("no tensors for 1 block(s) (3)" in f.message for f in found)


def test_a_v2_carrier_directory_is_used_alone(packages: PackageFactory, tmp_path: Path) -> None:
    """A carrier listing every tensor (no data) speaks for the model: one finding per tensor,
    naming the carrier, not the embeddings/output fragments again."""
    info = packages.build()
    edit_package(info, _vocab(N - 8))
    view = real_view(info)
    carrier = read_header_file(_model(tmp_path, N, _vocab(N - 8)))
    view.headers["shared/metadata.gguf"] = carrier
    found = [f for f in load_safety_findings(view) if f.code == "vocab_embedding_rows_mismatch"]
    assert sorted(f.message.split(" has ")[0] for f in found) == [
        "shared/metadata.gguf: output.weight", "shared/metadata.gguf: token_embd.weight"]


def test_demo_packages_have_no_tokenizer_or_hparam_finding(packages: PackageFactory) -> None:
    for kind in ("llama", "glm-dsa"):
        report = certify_dir(packages.build(kind).root)
        for name in ("tokenizer", "tokenizer_copies"):
            run = next(c for c in report.checks if c.name == name)
            assert run.status == "passed" and run.findings == 0


@pytest.mark.slow
@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_real_models_audit_clean(model: str) -> None:
    path = smollm2_path() if model == "smollm2" else gemma3_path()
    view = single_file_view(path)
    assert load_safety_findings(view) == []
    # the rules did look at this model: the same header, one hparam and one id off, fails
    header = view.headers[path.name]
    assert isinstance(header, GGUFHeader)
    arch = header.architecture
    header.kv[f"{arch}.attention.head_count_kv"] = 2
    header.kv[f"{TOK}eos_token_id"] = header.kv[f"{TOK}tokens"].length
    assert {f.code for f in load_safety_findings(view)} == {
        "hparam_shape_mismatch", "special_token_out_of_range"}


def test_a_wrong_hparam_repeated_in_every_fragment_is_one_finding_per_tensor_kind(
        packages: PackageFactory) -> None:
    info = packages.build(layers=4)
    edit_package(info, _arch(attention__head_count_kv=2), fragment_paths(info))
    found = [f for f in certify_dir(info.root).findings if f.code == "hparam_shape_mismatch"]
    assert sorted(f.message.split(" has ")[0] for f in found) == [
        "blk.N.attn_k.weight", "blk.N.attn_v.weight"]
    assert all("4 tensor(s) in 4 file(s)" in f.message and "[64, 32]" in f.message
               for f in found)


def test_a_v2_carrier_alone_speaks_for_the_hparams(packages: PackageFactory,
                                                   tmp_path: Path) -> None:
    info = packages.build()
    view = real_view(info)
    view.headers["shared/metadata.gguf"] = read_header_file(
        _model(tmp_path, N, _arch(feed_forward_length=96)))
    found = [f for f in load_safety_findings(view) if f.code == "hparam_shape_mismatch"]
    assert len(found) == 3  # ffn_gate, ffn_up, ffn_down: from the carrier only
    assert {f.path for f in found} == {"shared/metadata.gguf"}


@pytest.mark.parametrize("kind", ["llama", "glm-dsa"])
def test_demo_source_models_audit_clean_as_single_files(tmp_path: Path, kind: str) -> None:
    spec = llama_spec() if kind == "llama" else glm_dsa_spec()
    path = write_source_gguf(spec, tmp_path / "model.gguf")
    assert load_safety_findings(single_file_view(path)) == []


def test_a_v1_metadata_gguf_with_rope_freqs_is_no_model_directory(tmp_path: Path) -> None:
    """The real v1 writer copies rope_freqs.weight into metadata.gguf: that makes it hold a
    tensor, not the model's directory, so the hparams are still checked on every fragment."""
    from tests.certify.v2_packages import build_v1, refresh_v1_artifact

    pkg = build_v1(tmp_path, rope_freqs=True)
    for rel in pkg.files:
        rewrite_gguf(pkg.root / rel, _arch(attention__head_count_kv=2))
        refresh_v1_artifact(pkg, rel)
    found = [f for f in certify_dir(pkg.root).findings if f.code == "hparam_shape_mismatch"]
    assert sorted(f.message.split(" has ")[0] for f in found) == [
        "blk.N.attn_k.weight", "blk.N.attn_v.weight"]
