"""meshcert against llama.cpp's own parser on random mutants of a valid GGUF: meshcert must never
pass a file llama.cpp refuses, and where it refuses a file llama.cpp accepts, the reason must be
one of the rules where meshcert is deliberately stricter (docs/gguf-rules.md)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from meshcert.certify.workers.llama_gguf import LlamaCppGGUF, find_library
from meshcert.core.codes import CODES
from tests.core.gguf.ggufbuild import KV, GGUFFile, V
from tests.core.gguf.hostile import base_file
from tests.core.gguf.test_hostile_corpus import structure_codes

# llama.cpp's gguf_init accepts these; meshcert refuses them on purpose (docs/gguf-rules.md).
STRICTER = frozenset({"gguf_tensor_out_of_bounds", "gguf_invalid_utf8", "gguf_invalid_bool",
                      "gguf_trailing_bytes"})
MUTANTS = 400


def rich_base() -> GGUFFile:
    """The corpus base plus one value of most GGUF types, so mutations reach every decoder."""
    f = base_file()
    f.kvs += [KV("x.flag", V.BOOL, True), KV("x.u8", V.UINT8, 7), KV("x.i64", V.INT64, -3),
              KV("x.f64", V.FLOAT64, 0.5),
              KV("x.words", V.ARRAY, ["a", "bb", "ccc"], sub_type=V.STRING),
              KV("x.ints", V.ARRAY, [1, 2, 3], sub_type=V.INT32)]
    return f


def mutants(seed: int) -> list[bytes]:
    """Byte flips and insertions inside the header, and truncations anywhere."""
    rng = random.Random(seed)
    base = rich_base()
    data, header = base.to_bytes(), len(base.header_bytes())
    out = []
    for _ in range(MUTANTS):
        mutant = bytearray(data)
        kind = rng.choice(["flip", "flip", "insert", "truncate"])
        if kind == "flip":
            for _ in range(rng.randint(1, 3)):
                mutant[rng.randrange(header)] = rng.randrange(256)
        elif kind == "insert":
            at = rng.randrange(header)
            mutant[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        else:
            del mutant[rng.randrange(len(mutant)):]
        out.append(bytes(mutant))
    return out


@pytest.mark.skipif(find_library() is None, reason="llama-cpp-python (the live extra) missing")
@pytest.mark.parametrize("seed", [12, 2026])
def test_meshcert_never_passes_what_llama_cpp_refuses(seed: int, tmp_path: Path) -> None:
    files = {}
    for i, data in enumerate(mutants(seed)):
        files[str(i)] = tmp_path / f"m{i}.gguf"
        files[str(i)].write_bytes(data)
    facts = LlamaCppGGUF().check(files)
    assert facts.unavailable is None
    both = 0
    for name, path in files.items():
        errors = {c for c in structure_codes(path.read_bytes()) if CODES[c].severity == "error"}
        verdict = facts.verdicts[name]
        if not verdict.accepted:
            assert errors, f"llama.cpp refuses mutant {name} but meshcert passes it: {verdict.log}"
            both += 1
        elif errors:
            assert errors <= STRICTER, (name, errors)
    assert both > MUTANTS // 2  # the mutants really are hostile, mostly
