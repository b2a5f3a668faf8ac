"""Per-fragment GGUF structure, end to end: break one real fragment, certify, read the codes.

Each breaker re-syncs the manifest entry (size, sha256, counts) so the GGUF code under test is
the only GGUF-level finding; `gguf_codes` is the report's codes restricted to those.
"""

from __future__ import annotations

import struct

import pytest
from gguf import GGMLQuantizationType as Q
from gguf import GGUFReader

from meshcert.certify.checks import all_checks
from meshcert.certify.report import CertReport
from tests.conftest import PackageFactory, certify_dir, codes
from tests.core.gguf.ggufbuild import (
    GGUF_CODES,
    KV,
    GGUFFile,
    RawTensor,
    V,
    layer_rel,
    rewrite,
    write_raw,
)


def gguf_codes(report: CertReport) -> set[str]:
    return codes(report) & GGUF_CODES


def only(report: CertReport, code: str) -> list[str]:
    """Messages of `code`, after asserting it is the only GGUF-level code."""
    assert gguf_codes(report) == {code}, [(f.code, f.message) for f in report.findings]
    assert report.status == "failed" or code in {"activation_width_mismatch",
                                                  "unexpected_tensor_for_architecture"}
    return [f.message for f in report.findings if f.code == code]


@pytest.mark.parametrize("kind", ["llama", "glm"])
def test_good_packages_have_no_gguf_findings(packages: PackageFactory, kind: str) -> None:
    info = packages.build(kind)
    report = certify_dir(info.root)
    assert gguf_codes(report) == set()
    assert report.status == "passed"


def test_bad_magic(packages: PackageFactory) -> None:
    info = packages.build()
    rel = layer_rel(1)
    write_raw(info, rel, b"GGML" + (info.root / rel).read_bytes()[4:])
    report = certify_dir(info.root)
    [message] = only(report, "gguf_bad_magic")
    assert rel in message
    assert next(f for f in report.findings if f.code == "gguf_bad_magic").layer_index == 1


def test_unsupported_version(packages: PackageFactory) -> None:
    info = packages.build()
    data = bytearray((info.root / "shared/output.gguf").read_bytes())
    data[4:8] = struct.pack("<I", 4)
    write_raw(info, "shared/output.gguf", bytes(data))
    [message] = only(certify_dir(info.root), "gguf_unsupported_version")
    assert "version 4" in message


def test_truncated_header(packages: PackageFactory) -> None:
    info = packages.build()
    rel = layer_rel(2)
    write_raw(info, rel, (info.root / rel).read_bytes()[:300])
    [message] = only(certify_dir(info.root), "gguf_truncated")
    assert "300" in message


def test_unknown_value_type_is_an_invalid_header(packages: PackageFactory) -> None:
    info = packages.build()
    rewrite(info, layer_rel(0), lambda f: f.kvs.append(KV("custom.thing", 42, None,
                                                          raw=bytes(8))))
    [message] = only(certify_dir(info.root), "gguf_invalid_header")
    assert "custom.thing" in message and "42" in message


def test_unknown_tensor_type_is_an_invalid_header(packages: PackageFactory) -> None:
    info = packages.build()

    def retype(f: GGUFFile) -> None:
        f.tensor("blk.0.attn_norm.weight").ggml_type = 250

    rewrite(info, layer_rel(0), retype)
    [message] = only(certify_dir(info.root), "gguf_invalid_header")
    assert "blk.0.attn_norm.weight" in message and "250" in message


def test_duplicate_key(packages: PackageFactory) -> None:
    info = packages.build()
    rewrite(info, layer_rel(3), lambda f: f.kvs.append(KV("general.name", V.STRING, "again")))
    [message] = only(certify_dir(info.root), "gguf_duplicate_key")
    assert "'general.name'" in message


def test_duplicate_tensor(packages: PackageFactory) -> None:
    info = packages.build()

    def repeat(f: GGUFFile) -> None:
        t = f.tensor("blk.3.ffn_norm.weight")
        f.tensors.append(RawTensor(t.name, t.shape, t.ggml_type, t.data))

    rewrite(info, layer_rel(3), repeat)
    [message] = only(certify_dir(info.root), "gguf_duplicate_tensor")
    assert "blk.3.ffn_norm.weight" in message


def test_tensor_out_of_bounds(packages: PackageFactory) -> None:
    info = packages.build()
    rel = layer_rel(1)
    path = info.root / rel
    last = GGUFReader(path).tensors[-1]
    write_raw(info, rel, path.read_bytes()[:last.data_offset + last.n_bytes - 1])
    [message] = only(certify_dir(info.root), "gguf_tensor_out_of_bounds")
    assert last.name in message


def test_a_truncated_layer_is_one_out_of_bounds_finding(packages: PackageFactory) -> None:
    """Cut to its first tensor: every later tensor ends past the file, one cause, one finding
    that names them all."""
    info = packages.build()
    rel = layer_rel(2)
    path = info.root / rel
    tensors = sorted(GGUFReader(path).tensors, key=lambda t: t.data_offset)
    first = tensors[0]
    write_raw(info, rel, path.read_bytes()[:first.data_offset + first.n_bytes])
    [message] = only(certify_dir(info.root), "gguf_tensor_out_of_bounds")
    assert f"{len(tensors) - 1} tensors' data end past the end" in message
    assert all(t.name in message for t in tensors[1:6])


def test_tensor_overlap(packages: PackageFactory) -> None:
    info = packages.build()

    def overlap(f: GGUFFile) -> None:
        f.tensors[0].offset = 0
        f.tensors[1].offset = 0  # the second tensor's bytes start where the first's do

    rewrite(info, layer_rel(2), overlap)
    [message] = only(certify_dir(info.root), "gguf_tensor_overlap")
    assert "blk.2.attn_norm.weight" in message and "blk.2.attn_q.weight" in message


def test_misaligned_tensor(packages: PackageFactory) -> None:
    info = packages.build()

    def misalign(f: GGUFFile) -> None:
        first = f.tensors[0]
        f.tensors[0].offset = 0
        f.tensors[1].offset = len(first.data) + 16  # alignment is 32

    rewrite(info, layer_rel(2), misalign)
    [message] = only(certify_dir(info.root), "gguf_misaligned_tensor")
    assert "blk.2.attn_q.weight" in message and "alignment 32" in message


def test_declared_alignment_is_the_one_checked(packages: PackageFactory) -> None:
    info = packages.build()

    def realign(f: GGUFFile) -> None:
        f.alignment = 64
        f.set("general.alignment", V.UINT32, 64)  # fragments declare one: changed in place
        f.tensors[0].offset = 0
        f.tensors[1].offset = len(f.tensors[0].data) + 32  # a multiple of 32, not of 64

    rewrite(info, layer_rel(2), realign)
    [message] = only(certify_dir(info.root), "gguf_misaligned_tensor")
    assert "blk.2.attn_q.weight" in message and "alignment 64" in message


def test_tensor_count_mismatch(packages: PackageFactory) -> None:
    info = packages.build()
    packages.edit_manifest(info, lambda m: m["layers"][1].update(tensor_count=10))
    [message] = only(certify_dir(info.root), "tensor_count_mismatch")
    assert "10" in message and "9" in message


def test_tensor_bytes_mismatch(packages: PackageFactory) -> None:
    info = packages.build()
    declared = info.manifest["shared"]["embeddings"]["tensor_bytes"]
    packages.edit_manifest(info, lambda m: m["shared"]["embeddings"].update(
        tensor_bytes=declared + 2))
    [message] = only(certify_dir(info.root), "tensor_bytes_mismatch")
    assert str(declared) in message and str(declared + 2) in message


def test_a_hostile_fragment_yields_a_bounded_number_of_findings(packages: PackageFactory) -> None:
    info = packages.build()

    def many(f: GGUFFile) -> None:
        f.tensors = [RawTensor(f"blk.1.x{i}.weight", (8,), int(Q.F32), bytes(32), offset=4 + i)
                     for i in range(200)]

    rewrite(info, layer_rel(1), many)
    report = certify_dir(info.root)
    assert 1 < sum(f.code == "gguf_misaligned_tensor" for f in report.findings) <= 21
    assert 1 < sum(f.code == "gguf_tensor_overlap" for f in report.findings) <= 21


def test_every_gguf_code_is_registered_by_a_check() -> None:
    registered = {code for check in all_checks() for code in check.codes}
    assert GGUF_CODES - registered == set()
