"""The hostile corpus, three ways: the reader + structure check on the file alone, `inspect`
(with llama.cpp's own parser as a second opinion that must agree), and placed into a real
package, where `certify` must fail with the case's code."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import run_checks
from meshcert.certify.inspect_file import inspect_gguf
from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.view import PackageView
from meshcert.certify.workers.llama_gguf import LlamaCppGGUF, find_library
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header
from tests.conftest import PackageFactory, certify_dir, codes
from tests.core.gguf.ggufbuild import KV, V, layer_rel, load, write_raw
from tests.core.gguf.hostile import CORPUS, Hostile, base_file, write_case

LLAMA = find_library() is not None
needs_llama = pytest.mark.skipif(not LLAMA, reason="llama-cpp-python (the live extra) missing")
CASES = [pytest.param(case, id=case.name) for case in CORPUS]


class MemorySource:
    """The whole file in memory (a ByteSource)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size: int | None = len(data)

    def read(self, offset: int, length: int) -> bytes:
        return self.data[offset:offset + length]


def structure_codes(data: bytes) -> set[str]:
    view = PackageView(ref=RefInfo(kind="local", pinned=False), display_ref="x", local_dir=None,
                       manifest_raw=None, parsed=ParsedManifest(None), standalone=True,
                       headers={"x.gguf": read_header(MemorySource(data))})
    checks = [c for c in all_checks() if c.name == "gguf_structure"]
    findings, runs = run_checks(view, checks)
    assert runs[0].status != "error", runs[0].details
    return {f.code for f in findings}


def test_the_base_file_is_clean_for_meshcert_and_llama_cpp(tmp_path: Path) -> None:
    path = tmp_path / "base.gguf"
    base_file().write(path)
    assert structure_codes(path.read_bytes()) == set()
    report = inspect_gguf(str(path))
    assert report.status == "passed", [(f.code, f.message) for f in report.findings]
    if LLAMA:
        assert report.findings == []


def test_every_case_breaks_one_rule_and_the_corpus_covers_each_new_code() -> None:
    assert len({c.name for c in CORPUS}) == len(CORPUS)
    new = {"gguf_tensor_data_not_dense", "gguf_trailing_bytes", "gguf_empty_key",
           "gguf_invalid_utf8", "gguf_invalid_bool", "gguf_big_endian"}
    assert new <= {c.code for c in CORPUS}


@pytest.mark.parametrize("case", CASES)
def test_the_structure_check_reports_the_case(case: Hostile) -> None:
    assert case.code in structure_codes(case.apply(base_file()))


@needs_llama
@pytest.mark.parametrize("case", CASES)
def test_inspect_fails_and_llama_cpp_agrees(case: Hostile, tmp_path: Path) -> None:
    path = write_case(case, tmp_path)
    report = inspect_gguf(str(path))
    assert report.status == "failed"
    assert case.code in codes(report)
    rejected = [f for f in report.findings if f.code == "llama_cpp_gguf_rejected"]
    if case.llama_says is None:  # meshcert is stricter here, by design (docs/gguf-rules.md)
        assert rejected == []
    else:
        [f] = rejected
        assert case.llama_says in f.message and f.path == str(path)


@pytest.mark.parametrize("case", CASES)
def test_the_case_in_a_package_fails_certify(case: Hostile, packages: PackageFactory) -> None:
    info = packages.build()
    rel = layer_rel(1)
    fragment = load(info.root / rel)
    write_raw(info, rel, case.apply(fragment))
    report = certify_dir(info.root)
    assert report.status == "failed"
    assert case.code in codes(report), [(f.code, f.message) for f in report.findings]
    flagged = [f for f in report.findings if f.code == case.code]
    assert all(f.path == rel and f.layer_index == 1 for f in flagged)
    if LLAMA:
        rejected = {f.path for f in report.findings if f.code == "llama_cpp_gguf_rejected"}
        assert rejected == (set() if case.llama_says is None else {rel})


def _carrier(reversed_order: bool) -> bytes:
    """A package-v2 metadata carrier: a tensor directory whose offsets point past its end."""
    f = base_file()
    f.kvs.append(KV("skippy.package.metadata_only", V.BOOL, True))
    if reversed_order:
        f.tensors.reverse()
        for t, offset in zip(f.tensors, (256, 128, 0), strict=True):
            t.offset = offset
    f.kvs.append(KV("hostile.pad", V.STRING, "x"))
    data_offset = -(-len(f.header_bytes()) // 32) * 32
    return f.to_bytes()[:data_offset]


@pytest.mark.parametrize("reversed_order", [False, True])
def test_a_metadata_carrier_is_not_held_to_the_layout_rules(reversed_order: bool,
                                                            tmp_path: Path) -> None:
    path = tmp_path / "metadata.gguf"
    path.write_bytes(_carrier(reversed_order))
    assert structure_codes(path.read_bytes()) == set()
    report = inspect_gguf(str(path))
    assert report.status == "passed", [(f.code, f.message) for f in report.findings]


def test_a_metadata_carrier_still_gets_the_header_rules(tmp_path: Path) -> None:
    f = base_file()
    f.kvs += [KV("skippy.package.metadata_only", V.BOOL, True), KV("", V.UINT32, 1)]
    data = f.to_bytes()[:-(-len(f.header_bytes()) // 32) * 32]
    assert structure_codes(data) == {"gguf_empty_key"}


def test_an_unusable_llama_cpp_library_is_not_available_not_passed(tmp_path: Path) -> None:
    path = tmp_path / "base.gguf"
    base_file().write(path)
    fake = tmp_path / "libggml-base.so"
    fake.write_bytes(b"not a shared library")
    facts = LlamaCppGGUF(library=fake).check({"base.gguf": path})
    assert facts.verdicts == {} and facts.unavailable and str(fake) in facts.unavailable
    report = inspect_gguf(str(path), opinion=LlamaCppGGUF(library=fake))
    assert report.status == "passed" and codes(report) == set()
    [run] = [c for c in report.checks if c.name == "llama_cpp_gguf"]
    assert run.status == "skipped" and (run.details or "").startswith(
        f"not available: llama.cpp's library {fake} could not be used")
    assert report.coverage is not None and report.coverage.llama_cpp == "not_available"


@needs_llama
def test_llama_cpp_log_is_captured_per_file(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.gguf", tmp_path / "bad.gguf"
    base_file().write(good)
    bad.write_bytes(b"GGUF" + bytes(4))
    facts = LlamaCppGGUF().check({"good": good, "bad": bad})
    assert facts.verdicts["good"].accepted and facts.verdicts["good"].n_tensors == 3
    assert not facts.verdicts["bad"].accepted
    assert "bad GGUF version" in facts.verdicts["bad"].log


@pytest.mark.parametrize("bad", [[0], [69_999], [10, 69_999]])
def test_a_long_array_names_its_first_bad_string_across_validation_chunks(bad: list[int]
                                                                         ) -> None:
    f = base_file()
    words = [f"w{i}" for i in range(70_000)]  # more than one validation chunk (65,536)
    for index in bad:
        words[index] = cast(str, b"\xff")
    f.kvs.append(KV("hostile.words", V.ARRAY, words, sub_type=V.STRING))
    header = read_header(MemorySource(f.to_bytes()))
    assert isinstance(header, GGUFHeader)
    assert header.invalid_utf8 == [f"item {bad[0]} of array 'hostile.words'"]


def test_a_v1_fragment_cannot_opt_out_of_the_layout_rules_with_the_carrier_marker(
        packages: PackageFactory) -> None:
    """Only the artifact a v2 manifest names as its carrier is exempt, never a v1 fragment
    that merely sets skippy.package.metadata_only."""
    from tests.core.gguf import ggufbuild

    info = packages.build("llama")
    rel = ggufbuild.layer_rel(1)

    def hide(fragment: ggufbuild.GGUFFile) -> None:
        fragment.set("skippy.package.metadata_only", 7, True)  # GGUF bool
        fragment.tensors[0].offset = 1 << 20  # a gap before the first tensor's data

    ggufbuild.rewrite(info, rel, hide)
    report = certify_dir(info.root)
    assert "gguf_tensor_data_not_dense" in {f.code for f in report.findings}
    assert report.status == "failed"


@needs_llama
def test_llama_cpps_refusal_of_a_fragment_with_the_carrier_marker_is_still_reported(
        packages: PackageFactory) -> None:
    """llama.cpp refuses the gap ("has offset ..., expected ..."): that refusal is waived only
    for the manifest's carrier, never for a fragment that sets the marker key itself."""
    from tests.core.gguf import ggufbuild

    info = packages.build("llama")
    rel = ggufbuild.layer_rel(1)

    def hide(fragment: ggufbuild.GGUFFile) -> None:
        fragment.set("skippy.package.metadata_only", 7, True)
        fragment.tensors[0].offset = 1 << 20

    ggufbuild.rewrite(info, rel, hide)
    report = certify_dir(info.root)
    rejected = [f for f in report.findings if f.code == "llama_cpp_gguf_rejected"]
    assert [f.path for f in rejected] == [rel] and "has offset" in rejected[0].message


@pytest.mark.parametrize("long_length", [0xAC, 0x1_80])
def test_a_cut_sequence_is_not_completed_by_the_next_strings_length_prefix(
        long_length: int) -> None:
    """The array is validated in one decode of its bytes, length prefixes included. A string
    ending in a cut 3-byte sequence (E2 82) followed by one of 0xAC bytes would read as the
    valid E2 82 AC ('€') if the prefix's first byte were kept: every prefix of a string of
    0x80 bytes or more is blanked first (0x180 starts with 0x80, another continuation byte)."""
    f = base_file()
    words = [f"w{i}" for i in range(5000)]  # long enough to be skipped, not kept
    words[41] = cast(str, b"x\xe2\x82")
    words[42] = "y" * long_length
    f.kvs.append(KV("hostile.words", V.ARRAY, words, sub_type=V.STRING))
    header = read_header(MemorySource(f.to_bytes()))
    assert isinstance(header, GGUFHeader)
    assert header.invalid_utf8 == ["item 41 of array 'hostile.words'"]


def test_long_strings_that_are_all_valid_pass() -> None:
    f = base_file()
    words = [f"w{i}" for i in range(5000)] + ["\u20ac" * 200, "z" * 300]
    f.kvs.append(KV("hostile.words", V.ARRAY, words, sub_type=V.STRING))
    header = read_header(MemorySource(f.to_bytes()))
    assert isinstance(header, GGUFHeader) and header.invalid_utf8 == []
