"""Metadata-role tensors (rope_freqs.weight, ...) as the real v1 writer copies them: into every
fragment, shared/metadata.gguf included. They are owned by no artifact, and every copy must be
byte-identical to the others (type, shape and data)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from gguf import GGMLQuantizationType

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import run_checks
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from meshcert.testing.writer import sha256_of
from tests.certify.checks.gguf_edits import Tensors, rewrite_gguf
from tests.certify.checks.manifest_edits import real_view
from tests.certify.v2_packages import build_v1, flip_tensor_byte, refresh_v1_artifact
from tests.conftest import certify_dir, codes
from tests.support.splits import SplitPackage

ROPE = "rope_freqs.weight"
LAYER = "layers/layer-002.gguf"


def differ_messages(pkg: SplitPackage) -> list[str]:
    report = certify_dir(pkg.root)
    assert report.status == "failed"
    return [f.message for f in report.findings if f.code == "metadata_tensor_copies_differ"]


def test_a_package_with_rope_freqs_in_every_fragment_passes(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    for rel in pkg.files:
        header = read_header_file(pkg.root / rel)
        assert isinstance(header, GGUFHeader), header
        assert ROPE in [t.name for t in header.tensors], rel
    report = certify_dir(pkg.root)
    assert report.status == "passed"
    assert [f.code for f in report.findings if f.severity != "info"] == []


def test_the_package_passes_against_its_source_too(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    report = certify_dir(pkg.root, source_gguf=str(pkg.source_path))
    assert report.status == "passed", [f.message for f in report.findings]
    assert "source_parity" in {c.name for c in report.checks}


def test_one_copy_with_a_flipped_byte_fails_naming_both_files(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    flip_tensor_byte(pkg, LAYER, ROPE)
    [message] = differ_messages(pkg)
    assert ROPE in message and LAYER in message and "shared/metadata.gguf" in message
    assert "data bytes differ" in message


def test_the_finding_points_at_the_differing_copy(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    flip_tensor_byte(pkg, LAYER, ROPE)
    [found] = [f for f in certify_dir(pkg.root).findings
               if f.code == "metadata_tensor_copies_differ"]
    assert found.path == LAYER and found.layer_index == 2 and found.severity == "error"


def test_a_flipped_byte_in_metadata_gguf_is_reported_against_the_copies_that_agree(
        tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    flip_tensor_byte(pkg, "shared/metadata.gguf", ROPE)
    messages = differ_messages(pkg)
    assert len(messages) == len(pkg.files) - 1  # every other copy differs from metadata's
    assert all("shared/metadata.gguf" in m for m in messages)


def test_a_copy_of_another_type_fails(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)

    def as_f16(tensors: Tensors) -> Tensors:
        return [(n, d.astype(np.float16) if n == ROPE else d,
                 GGMLQuantizationType.F16 if n == ROPE else t) for n, d, t in tensors]

    rewrite_gguf(pkg.root / LAYER, lambda kv: None, as_f16)
    refresh_v1_artifact(pkg, LAYER)
    [message] = differ_messages(pkg)
    assert "type F32 there, F16 here" in message and LAYER in message


def test_a_copy_of_another_shape_fails(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)

    def halved(tensors: Tensors) -> Tensors:
        return [(n, d[: len(d) // 2] if n == ROPE else d, t) for n, d, t in tensors]

    rewrite_gguf(pkg.root / LAYER, lambda kv: None, halved)
    refresh_v1_artifact(pkg, LAYER)
    [message] = differ_messages(pkg)
    assert "shape [8] there, [4] here" in message


def test_a_copy_whose_bytes_were_not_hashed_is_not_compared(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, rope_freqs=True)
    view = real_view(pkg)  # type: ignore[arg-type]
    del view.tensor_digests[LAYER]
    check = [c for c in all_checks() if c.name == "metadata_tensor_copies"]
    findings, runs = run_checks(view, check)
    [found] = findings
    assert found.code == "check_not_run" and LAYER in found.message and ROPE in found.message
    assert runs[0].status == "error"  # incomplete, never passed


def test_a_tensor_in_one_fragment_only_has_nothing_to_compare(tmp_path: Path) -> None:
    """The earlier packagegen put metadata-role tensors in output.gguf only: one copy."""
    pkg = build_v1(tmp_path, rope_freqs=True)
    for rel in pkg.files:
        if rel != "shared/output.gguf":
            rewrite_gguf(pkg.root / rel, lambda kv: None,
                         lambda ts: [t for t in ts if t[0] != ROPE])
    path = pkg.root / "model-package.json"
    manifest = json.loads(path.read_text())
    for entry in [*manifest["shared"].values(), *manifest["layers"]]:
        file = pkg.root / entry["path"]
        header = read_header_file(file)
        assert isinstance(header, GGUFHeader), header
        entry |= {"sha256": sha256_of(file), "artifact_bytes": file.stat().st_size,
                  "tensor_count": len(header.tensors),
                  "tensor_bytes": sum(t.n_bytes for t in header.tensors)}
    path.write_text(json.dumps(manifest, indent=2) + "\n")
    report = certify_dir(pkg.root)
    assert "metadata_tensor_copies_differ" not in codes(report)
    assert report.status == "passed", [f.message for f in report.findings]


def test_files_inspected_on_their_own_are_not_compared_as_copies(tmp_path: Path) -> None:
    """Two fragments inspected without their manifest are no package: nothing was hashed,
    and nothing is reported as not compared either."""
    from tests.certify.checks.gguf_edits import single_file_view

    pkg = build_v1(tmp_path, rope_freqs=True)
    view = single_file_view(pkg.root / "shared/metadata.gguf", pkg.root / LAYER)
    check = [c for c in all_checks() if c.name == "metadata_tensor_copies"]
    assert run_checks(view, check)[0] == []
