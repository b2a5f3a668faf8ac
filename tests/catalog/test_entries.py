"""Reading catalog entry files: both shapes of `variants`, and every way an entry can be
wrong, each a `catalog_entry_invalid` finding naming the file."""

from __future__ import annotations

import json
from typing import Any

import pytest

from meshcert.catalog.entries import ParsedEntry, parse_entry, variant_key

PATH = "entries/meshcert/tiny-llama.json"
SHA = "ab" * 20


def parse(data: Any, path: str = PATH) -> ParsedEntry:
    return parse_entry(path, json.dumps(data).encode())


def entry(variants: Any, **extra: Any) -> dict[str, Any]:
    return {"schema_version": 1, "source_repo": "meshcert/tiny-llama", "variants": variants,
            **extra}


def test_a_keyed_entry_yields_every_layer_package_reference() -> None:
    parsed = parse(entry({
        "Q4_K_M": {"source": {"repo": "meshcert/tiny-llama", "file": "tiny-Q4_K_M.gguf",
                              "revision": "main"},
                   "curated": {"name": "Tiny"},
                   "packages": [
                       {"type": "layer-package", "repo": "ns/pkg-a", "layer_count": 4,
                        "total_bytes": 1000, "source_revision": "main", "revision": SHA},
                       {"type": "gguf", "repo": "ns/not-ours"},
                       {"type": "layer-package", "repo": "ns/pkg-b"}]},
        "Q8_0": {"packages": [{"type": "layer-package", "repo": "ns/pkg-c"}]}}))
    assert parsed.findings == [] and parsed.readable
    a, b, c = parsed.references
    assert (a.variant, a.index, a.repo, a.revision, a.layer_count, a.total_bytes,
            a.source_revision) == ("Q4_K_M", 0, "ns/pkg-a", SHA, 4, 1000, "main")
    assert a.pinned_commit == SHA and a.source.file == "tiny-Q4_K_M.gguf"
    assert (b.index, b.pinned_commit, b.position) == (2, None, 0)  # the gguf one is skipped
    assert (c.variant, c.position, c.list_shaped) == ("Q8_0", 1, False)


def test_an_old_list_shaped_entry_is_read_too() -> None:
    parsed = parse(entry([
        {"variant": "Q4", "packages": [{"type": "layer-package", "repo": "ns/a"}]},
        {"source": {"file": "sub/Tiny-Q8_0-00001-of-00003.gguf"},
         "packages": [{"type": "layer-package", "repo": "ns/b"}]},
        {"packages": [{"type": "layer-package", "repo": "ns/c"}]}]))
    assert parsed.findings == []
    assert [(r.variant, r.position, r.list_shaped) for r in parsed.references] == [
        ("Q4", 0, True), ("Tiny-Q8_0", 1, True), ("variants[2]", 2, True)]


@pytest.mark.parametrize(("raw", "why"), [
    (b"{not json", "does not parse: not JSON"),
    (b"\xff\xfe", "not UTF-8"),
    (b'{"schema_version": 1, "variants": {"a": NaN}}', "NaN is not valid JSON"),
    (b"[" * 40 + b"]" * 40, "nests deeper than 32 levels"),
    (b"[1, 2]", "an entry is a JSON object, found list"),
    (b'{"schema_version": 2, "variants": {}}', "schema_version 2 is not 1"),
    (b'{"schema_version": true, "variants": {}}', "schema_version True is not 1"),
    (b'{"schema_version": 1}', "variants must be an object keyed by variant (or the old "
     "list), found nothing"),
])
def test_a_file_that_does_not_read_is_a_finding_naming_it(raw: bytes, why: str) -> None:
    parsed = parse_entry(PATH, raw)
    assert not parsed.readable and parsed.references == []
    [found] = parsed.findings
    assert (found.code, found.severity, found.path) == ("catalog_entry_invalid", "error", PATH)
    assert found.message.startswith(PATH) and why in found.message


def test_an_oversized_file_is_not_parsed() -> None:
    parsed = parse_entry(PATH, b" " * ((1 << 20) + 1))
    assert not parsed.readable and "over the 1048576 byte limit" in parsed.findings[0].message


def test_a_bad_variant_or_reference_is_left_out_and_the_rest_goes_on() -> None:
    parsed = parse(entry({
        "bad-variant": "not an object",
        "bad-packages": {"packages": {"type": "layer-package"}},
        "bad-source": {"source": "meshcert/tiny-llama",
                       "packages": [{"type": "layer-package", "repo": "ns/ok-1"}]},
        "refs": {"packages": [
            "ns/a-string",
            {"type": "layer-package"},
            {"type": "layer-package", "repo": "not a repo"},
            {"type": "layer-package", "repo": "hf://ns/x"},
            {"type": "layer-package", "repo": "ns/x@main"},
            {"type": "layer-package", "repo": "ns/ok-2", "layer_count": "four",
             "total_bytes": -1, "revision": 7, "source_revision": ""}]}}))
    assert parsed.readable
    assert [r.repo for r in parsed.references] == ["ns/ok-1", "ns/ok-2"]
    messages = [f.message.removeprefix(PATH + ": ") for f in parsed.findings]
    assert messages == [
        "variant 'bad-variant' must be an object, found str",
        "variant 'bad-packages': packages must be a list, found dict",
        "variant 'bad-source': source must be an object, found str",
        "variant 'refs' packages[0] must be an object, found str",
        "variant 'refs' packages[1]: repo must be a string \"ns/name\", found nothing",
        "variant 'refs' packages[2]: repo 'not a repo' is not a Hub repository id ('hf://not "
        "a repo': the repo must be exactly namespace/name (got 'not a repo'))",
        "variant 'refs' packages[3]: repo 'hf://ns/x' is not a Hub repository id "
        "('hf://hf://ns/x': the repo must be exactly namespace/name (got 'hf'))",
        "variant 'refs' packages[4]: repo 'ns/x@main' holds a revision; record it as "
        "\"revision\""]
    ok = parsed.references[1]
    assert (ok.layer_count, ok.total_bytes, ok.revision, ok.source_revision) == (None,) * 4
    assert [p.message.removeprefix(PATH + ": ") for p in ok.problems] == [
        "variant 'refs' packages[5]: revision must be a non-empty string, found 7; it is "
        "ignored",
        "variant 'refs' packages[5]: layer_count must be a non-negative integer, found 'four'; "
        "it is ignored",
        "variant 'refs' packages[5]: total_bytes must be a non-negative integer, found -1; it "
        "is ignored",
        "variant 'refs' packages[5]: source_revision must be a non-empty string, found ''; it "
        "is ignored"]
    assert all(p.code == "catalog_entry_invalid" for p in ok.problems)


def test_source_repo_must_match_the_file_name() -> None:
    wrong = parse(entry({}, source_repo="someone/else"))
    assert wrong.readable and [f.message for f in wrong.findings] == [
        f"{PATH}: source_repo 'someone/else' does not match the file name "
        "(entries/meshcert/tiny-llama.json)"]
    assert parse(entry({}, source_repo="MeshCert/Tiny-Llama")).findings == []
    blank = parse(entry({}, source_repo=""))
    assert "source_repo must be a non-empty string" in blank.findings[0].message


@pytest.mark.parametrize(("revision", "pinned"), [
    (SHA, SHA), (SHA.upper(), SHA), ("main", None), (SHA[:12], None), ("refs/pr/1", None)])
def test_only_a_full_commit_pins_a_reference(revision: str, pinned: str | None) -> None:
    parsed = parse(entry({"v": {"packages": [{"type": "layer-package", "repo": "ns/a",
                                              "revision": revision}]}}))
    assert parsed.references[0].pinned_commit == pinned


@pytest.mark.parametrize(("file", "key"), [
    ("Tiny-Q4_K_M.gguf", "Tiny-Q4_K_M"), ("a/b/Tiny-Q8_0-00002-of-00004.gguf", "Tiny-Q8_0"),
    ("Tiny.GGUF", "Tiny"), ("no-extension", "no-extension")])
def test_variant_key_is_the_stem_without_the_shard_suffix(file: str, key: str) -> None:
    assert variant_key(file) == key
