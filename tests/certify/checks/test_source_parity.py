"""--source: the package against the unsplit (or split) source GGUF it was cut from.

packagegen writes every tensor with the same bytes in the source and in the package, so a good
package has full parity; each breaker changes one thing on one side.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from gguf import GGMLQuantizationType as Q

from meshcert.certify.package_gguf.source_facts import source_facts
from meshcert.certify.report import CertReport
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.sources.source_gguf import attach_source, hash_file_and_ranges
from meshcert.certify.view import CertOptions
from meshcert.core.gguf.model import GGUFHeader
from meshcert.testing import PackageInfo
from tests.conftest import PackageFactory, certify_dir, codes
from tests.core.gguf.ggufbuild import (
    KV,
    GGUFFile,
    RawTensor,
    V,
    drop_tensors,
    layer_rel,
    load,
    rewrite,
)

SOURCE_CODES = {"source_sha256_mismatch", "source_tensor_missing_from_package",
                "package_tensor_not_in_source", "source_tensor_data_mismatch",
                "source_not_package_source", "unknown_source_file", "layer_count_mismatch",
                "source_metadata_mismatch"}


def certify_with_source(info: PackageInfo, source: Path | None = None) -> CertReport:
    return certify_dir(info.root, source_gguf=str(source or info.source_path))


def source_findings(report: CertReport) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in report.findings:
        if f.code in SOURCE_CODES or f.code == "check_not_run":
            out.setdefault(f.code, []).append(f.message)
    return out


@pytest.mark.parametrize("kind", ["llama", "glm"])
def test_good_package_matches_its_source(packages: PackageFactory, kind: str) -> None:
    info = packages.build(kind)
    report = certify_with_source(info)
    assert source_findings(report) == {}
    assert report.status == "passed"


def test_facts_hold_real_digests_of_both_sides(packages: PackageFactory) -> None:
    info = packages.build()
    assert info.source_path is not None
    view = load_local_package(str(info.root), display_ref="x", options=CertOptions())
    attach_source(view, str(info.source_path))
    facts = source_facts(view)
    assert facts is not None and isinstance(view.source_header, GGUFHeader)
    [shard] = facts.shards
    assert shard.sha256 == hashlib.sha256(info.source_path.read_bytes()).hexdigest()
    assert len(facts.tensors) == len(info.spec.tensors)
    name = "blk.2.ffn_down.weight"
    src = facts.tensors[name]
    assert src.digest is not None and facts.tensor_digest == "sha256"
    assert facts.package_tensor_digest[(layer_rel(2), name)] == src.digest
    data = load(info.root / layer_rel(2)).tensor(name).data
    assert src.digest == hashlib.sha256(data).hexdigest()


def test_hash_ranges_streams_overlapping_and_out_of_file_ranges(tmp_path: Path) -> None:
    path = tmp_path / "blob"
    blob = bytes(range(256)) * 40_000  # ~10 MB: several hashing chunks
    path.write_bytes(blob)
    ranges = {"a": (0, 10), "b": (5, 9_000_000), "c": (4_194_300, 10), "d": (len(blob) - 1, 2),
              "e": (len(blob), 0)}
    size, whole, digests = hash_file_and_ranges(str(path), ranges)
    assert (size, whole) == (len(blob), hashlib.sha256(blob).hexdigest())
    for key in "abce":
        start, length = ranges[key]
        assert digests[key] == hashlib.sha256(blob[start:start + length]).hexdigest(), key
    assert digests["d"] is None


def test_source_sha256_differs_from_the_manifest(packages: PackageFactory) -> None:
    info = packages.build()
    packages.edit_manifest(info, lambda m: m["source_model"].update(sha256="ab" * 32))
    found = source_findings(certify_with_source(info))
    assert list(found) == ["source_sha256_mismatch"]
    [message] = found["source_sha256_mismatch"]
    assert "source_model.sha256" in message and "abab" in message


def test_source_tensor_missing_from_the_package(packages: PackageFactory) -> None:
    info = packages.build()
    drop_tensors(info, layer_rel(1), keep=lambda n: n != "blk.1.ffn_gate.weight")
    report = certify_with_source(info)
    found = source_findings(report)
    assert list(found) == ["source_tensor_missing_from_package"]
    assert "blk.1.ffn_gate.weight" in found["source_tensor_missing_from_package"][0]
    assert next(f for f in report.findings
                if f.code == "source_tensor_missing_from_package").layer_index == 1


def test_package_tensor_not_in_the_source(packages: PackageFactory) -> None:
    info = packages.build()
    rewrite(info, "shared/output.gguf", lambda f: f.tensors.append(
        RawTensor("rope_freqs.weight", (16,), int(Q.F32), bytes(64))))
    found = source_findings(certify_with_source(info))
    assert list(found) == ["package_tensor_not_in_source"]
    assert "rope_freqs.weight" in found["package_tensor_not_in_source"][0]


def _edit_tensor(name: str, **changes: Any) -> Any:
    def edit(f: GGUFFile) -> None:
        t = f.tensor(name)
        for key, value in changes.items():
            setattr(t, key, value)
    return edit


@pytest.mark.parametrize("name,changes,expected", [
    ("blk.2.attn_q.weight", {"data": None}, "data bytes differ"),
    ("blk.0.attn_norm.weight", {"ggml_type": int(Q.F16), "data": bytes(128)},
     "type F32 in the source, F16 in the package"),
    ("blk.3.attn_k.weight", {"shape": (32, 128)}, "shape [64, 64] in the source, [32, 128]"),
])
def test_tensor_differs_from_the_source(packages: PackageFactory, name: str,
                                        changes: dict[str, Any], expected: str) -> None:
    info = packages.build()
    layer = int(name.split(".")[1])
    original = load(info.root / layer_rel(layer)).tensor(name).data
    if changes.get("data", 0) is None:
        changes["data"] = bytes([original[0] ^ 0xFF]) + original[1:]
    rewrite(info, layer_rel(layer), _edit_tensor(name, **changes))
    report = certify_with_source(info)
    found = source_findings(report)
    assert list(found) == ["source_tensor_data_mismatch"]
    [message] = found["source_tensor_data_mismatch"]
    assert name in message and expected in message
    assert report.status == "failed"


def _split_source(info: PackageInfo, directory: Path) -> list[Path]:
    """Write the source as a two-shard set (like gguf-split) and describe it in the manifest."""
    assert info.source_path is not None
    whole = load(info.source_path)
    half = len(whole.tensors) // 2
    stem = info.source_path.stem
    paths = [directory / f"{stem}-{i:05d}-of-00002.gguf" for i in (1, 2)]
    for i, (path, tensors) in enumerate(zip(paths, (whole.tensors[:half], whole.tensors[half:]),
                                            strict=True)):
        split = [KV("split.no", V.UINT16, i), KV("split.count", V.UINT16, 2),
                 KV("split.tensors.count", V.INT32, len(whole.tensors))]
        GGUFFile((whole.kvs if i == 0 else whole.kvs[:1]) + split, tensors).write(path)
    files = [{"path": p.name, "size_bytes": p.stat().st_size,
              "sha256": hashlib.sha256(p.read_bytes()).hexdigest()} for p in paths]
    PackageFactory.edit_manifest(info, lambda m: m["source_model"].update(
        path=paths[0].name, primary_file=paths[0].name, sha256=files[0]["sha256"], files=files))
    return paths


def test_split_source_set_is_read_shard_by_shard(packages: PackageFactory,
                                                 tmp_path: Path) -> None:
    info = packages.build()
    first, second = _split_source(info, tmp_path)
    assert source_findings(certify_with_source(info, first)) == {}
    data = bytearray(second.read_bytes())
    data[-10] ^= 0xFF  # a byte of the second shard's last tensor, output.weight
    second.write_bytes(bytes(data))
    found = source_findings(certify_with_source(info, first))
    # one fault, one finding: the shard is not the file the manifest names; the tensor that
    # differs is named inside it, not reported again per tensor
    assert list(found) == ["source_sha256_mismatch"]
    [sha_message] = found["source_sha256_mismatch"]
    assert second.name in sha_message and "files[]" in sha_message
    assert "1 differ in type, shape or bytes: output.weight" in sha_message


def test_split_source_with_a_missing_shard_is_incomplete(packages: PackageFactory,
                                                         tmp_path: Path) -> None:
    info = packages.build()
    first, second = _split_source(info, tmp_path)
    second.unlink()
    report = certify_with_source(info, first)
    assert source_findings(report) == {
        "check_not_run": ["source GGUF not compared: missing source shard(s): "
                          f"{second.name}"]}
    assert report.status == "incomplete"


@pytest.mark.parametrize("content", [None, b"not a gguf file at all"])
def test_unreadable_source_is_incomplete_not_passed(packages: PackageFactory, tmp_path: Path,
                                                    content: bytes | None) -> None:
    info = packages.build()
    source = tmp_path / "source.gguf"
    if content is not None:
        source.write_bytes(content)
    report = certify_with_source(info, source)
    assert set(source_findings(report)) == {"check_not_run"}
    assert report.status == "incomplete"
    assert SOURCE_CODES & codes(report) == set()


def _without_declared_digests(info: PackageInfo) -> None:
    def strip(manifest: dict[str, Any]) -> None:
        manifest["source_model"].pop("sha256", None)
        for entry in manifest["source_model"].get("files") or []:
            entry.pop("sha256", None)
    PackageFactory.edit_manifest(info, strip)


@pytest.mark.parametrize("kind", ["llama", "glm_dsa"])
def test_another_models_file_as_source_is_one_finding_naming_both_digests(
        packages: PackageFactory, kind: str) -> None:
    """A 4-layer package given a 6-layer model's file (or another architecture's): one error
    with the file's SHA-256 and the manifest's, not one per tensor."""
    info = packages.build()
    other = packages.build(kind, layers=6)
    assert other.source_path is not None and info.source_path is not None
    report = certify_with_source(info, other.source_path)
    found = source_findings(report)
    assert list(found) == ["source_sha256_mismatch"]
    [message] = found["source_sha256_mismatch"]
    theirs = hashlib.sha256(other.source_path.read_bytes()).hexdigest()
    ours = hashlib.sha256(info.source_path.read_bytes()).hexdigest()
    assert "is not the package's source" in message and theirs in message and ours in message
    assert "it has 6 blocks, the package 4 layers" in message
    assert report.status == "failed"


def test_another_models_file_without_declared_digests_is_one_finding(
        packages: PackageFactory) -> None:
    info = packages.build()
    _without_declared_digests(info)
    other = packages.build("glm_dsa", layers=6)
    found = source_findings(certify_with_source(info, other.source_path))
    assert list(found) == ["source_not_package_source"]
    [message] = found["source_not_package_source"]
    assert "declares no SHA-256" in message and "it has 6 blocks" in message


def test_without_declared_digests_the_right_source_still_finds_a_missing_tensor(
        packages: PackageFactory) -> None:
    """The tensor-set rule does not swallow a package fault: one tensor short of the source is
    the package's defect, reported per layer as before."""
    info = packages.build()
    _without_declared_digests(info)
    drop_tensors(info, layer_rel(1), keep=lambda n: n != "blk.1.ffn_gate.weight")
    found = source_findings(certify_with_source(info))
    assert list(found) == ["source_tensor_missing_from_package"]
