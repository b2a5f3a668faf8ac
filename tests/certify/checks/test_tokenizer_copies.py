"""Every copy of every tokenizer.* key agrees with metadata.gguf's, byte for byte."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from meshcert.testing import PackageInfo, llama_spec, write_package, write_source_gguf
from tests.certify.checks.gguf_edits import (
    KV,
    Typed,
    V,
    edit_package,
    fragment_paths,
    load_safety_findings,
    read_gguf,
    rewrite_gguf,
    single_file_view,
)
from tests.conftest import PackageFactory, certify_dir, codes

LAYER = "layers/layer-002.gguf"
BIG = 4352  # long arrays: compared through the reader's digest


def _with_tokenizer(info: PackageInfo, change: Callable[[KV], None] | None = None
                    ) -> Callable[[KV], None]:
    """An edit giving a fragment metadata.gguf's tokenizer.* keys (then `change` applied)."""
    _, meta, _ = read_gguf(info.root / "shared/metadata.gguf")
    tokenizer = {k: v for k, v in meta.items() if k.startswith("tokenizer.")}

    def edit(kv: KV) -> None:
        kv.update(tokenizer)
        if change is not None:
            change(kv)
    return edit


def _copies_differ(info: PackageInfo) -> list[str]:
    report = certify_dir(info.root)
    return [f.message for f in report.findings if f.code == "tokenizer_copies_differ"]


def test_identical_copies_in_every_fragment_agree(packages: PackageFactory) -> None:
    info = packages.build()
    others = [p for p in fragment_paths(info) if p != "shared/metadata.gguf"]
    edit_package(info, _with_tokenizer(info), others)
    report = certify_dir(info.root)
    assert report.status == "passed"
    run = next(c for c in report.checks if c.name == "tokenizer_copies")
    assert run.status == "passed" and run.findings == 0


def _token_patched(kv: KV) -> None:
    tokens = kv["tokenizer.ggml.tokens"]
    kv["tokenizer.ggml.tokens"] = Typed([*tokens.value[:-1], "<backdoor>"], tokens.vtype,
                                        tokens.sub_type)


CHANGES: dict[str, Callable[[KV], None]] = {
    "other_template": lambda kv: kv.__setitem__(
        "tokenizer.chat_template", "{% for m in messages %}{{ m.content }}{% endfor %}"),
    "patched_token": _token_patched,
    "other_id": lambda kv: kv.__setitem__("tokenizer.ggml.eos_token_id", 1),
    "same_id_other_type": lambda kv: kv.__setitem__("tokenizer.ggml.eos_token_id",
                                                    Typed(2, V.INT32)),
    "extra_key": lambda kv: kv.__setitem__("tokenizer.chat_template.tool_use", "{{ 1 }}"),
}


@pytest.mark.parametrize("name", sorted(CHANGES))
def test_a_copy_that_differs_fails_certify(packages: PackageFactory, name: str) -> None:
    info = packages.build()
    edit_package(info, _with_tokenizer(info, CHANGES[name]), [LAYER])
    report = certify_dir(info.root)
    assert report.status == "failed"
    hits = [f for f in report.findings if f.code == "tokenizer_copies_differ"]
    assert len(hits) == 1 and hits[0].path == LAYER


def test_a_patched_token_in_a_long_vocabulary_is_found(tmp_path: Path) -> None:
    info = write_package(llama_spec(n_vocab=BIG), tmp_path / "pkg", source_dir=tmp_path / "src")
    edit_package(info, _with_tokenizer(info), ["layers/layer-000.gguf"])
    edit_package(info, _with_tokenizer(info, _token_patched), [LAYER])
    messages = _copies_differ(info)
    assert len(messages) == 1
    assert messages[0].startswith("tokenizer.ggml.tokens differs from the reference copy (an "
                                  f"array of {BIG} items")
    assert LAYER in messages[0] and "layer-000" not in messages[0]


def test_a_split_sets_later_shard_is_compared_with_the_first(tmp_path: Path) -> None:
    first, second = tmp_path / "m-00001-of-00002.gguf", tmp_path / "m-00002-of-00002.gguf"
    for path in (first, second):
        write_source_gguf(llama_spec(), path)
    rewrite_gguf(second, CHANGES["other_id"])
    found = load_safety_findings(single_file_view(first, second))
    assert [(f.code, f.path) for f in found] == [("tokenizer_copies_differ", second.name)]


def test_no_copies_no_finding(packages: PackageFactory) -> None:
    info = packages.build()  # the demo writer keeps the tokenizer in metadata.gguf only
    assert "tokenizer_copies_differ" not in codes(certify_dir(info.root))


@pytest.mark.parametrize(("ours", "theirs"), [
    ([1, 2], [1.0, 2.0]),  # an int array is not a float array with the same values
    ([1, 0], [True, False]),
    ([0.0, 1.5], [-0.0, 1.5]),  # floats by their bits
    (["a", "b"], ["a", "c"]),
    ([1, 2], [1, True]),  # one plain type against a mixed list
    ([[1], [2]], [[1], [2.0]]),
], ids=["int-float", "int-bool", "signed-zero", "str", "mixed", "nested"])
def test_short_arrays_differ_by_element_type_and_bits(ours: list[object], theirs: list[object]
                                                      ) -> None:
    from meshcert.certify.checks.tokenizer_copies import canonical

    assert canonical(ours) != canonical(theirs)
    assert canonical(ours) == canonical(list(ours))
    nan = float("nan")
    assert canonical([nan, 1.0]) == canonical([nan, 1.0])  # a NaN equals itself, by bits
