"""Tensor ownership and architecture across a package's fragments, end to end."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from gguf import GGMLQuantizationType as Q

from meshcert.certify.checks import all_checks
from meshcert.certify.engine import run_checks
from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.core.gguf.model import HeaderProblem
from tests.certify.checks.manifest_edits import GARBAGE
from tests.conftest import PackageFactory, certify_dir
from tests.core.gguf.ggufbuild import (
    GGUFFile,
    RawTensor,
    V,
    copy_tensor,
    drop_tensors,
    layer_rel,
    move_tensor,
    rewrite,
)
from tests.core.gguf.test_gguf_structure_checks import gguf_codes, only


def adding(tensor: RawTensor) -> Callable[[GGUFFile], None]:
    """A fragment edit appending `tensor`."""
    return lambda f: f.tensors.append(tensor)


def finding_of(report: Any, code: str) -> Any:
    return next(f for f in report.findings if f.code == code)


def test_layer_file_holding_another_layers_tensor(packages: PackageFactory) -> None:
    info = packages.build()
    move_tensor(info, "blk.1.ffn_norm.weight", layer_rel(1), layer_rel(2))
    report = certify_dir(info.root)
    [message] = only(report, "tensor_in_wrong_layer")
    assert "blk.1.ffn_norm.weight" in message and "layer 2" in message
    assert finding_of(report, "tensor_in_wrong_layer").layer_index == 2


def test_shared_file_holding_a_layer_tensor(packages: PackageFactory) -> None:
    info = packages.build()
    move_tensor(info, "blk.0.ffn_norm.weight", layer_rel(0), "shared/output.gguf")
    report = certify_dir(info.root)
    [message] = only(report, "tensor_in_wrong_layer")
    assert "shared/output.gguf" in message and "blk.0.ffn_norm.weight" in message


def test_tensor_in_two_artifacts(packages: PackageFactory) -> None:
    info = packages.build()
    copy_tensor(info, "token_embd.weight", "shared/embeddings.gguf", "shared/output.gguf")
    [message] = only(certify_dir(info.root), "tensor_duplicated_across_artifacts")
    assert "token_embd.weight" in message
    assert "shared/embeddings.gguf" in message and "shared/output.gguf" in message


def test_metadata_with_an_owned_tensor(packages: PackageFactory) -> None:
    info = packages.build()
    move_tensor(info, "output_norm.weight", "shared/output.gguf", "shared/metadata.gguf")
    report = certify_dir(info.root)
    [message] = [f.message for f in report.findings if f.code == "metadata_has_tensors"]
    assert "output_norm.weight" in message


def test_metadata_with_a_metadata_role_tensor_is_not_owning_it(packages: PackageFactory
                                                                ) -> None:
    """rope_freqs.weight is neither a layer's, the embeddings', the final norm's nor the
    output's: the real v1 writer copies it into metadata.gguf (and every other fragment)."""
    info = packages.build()
    rewrite(info, "shared/metadata.gguf", lambda f: f.tensors.append(
        RawTensor("rope_freqs.weight", (16,), int(Q.F32), bytes(64))))
    assert gguf_codes(certify_dir(info.root)) == set()


def test_fragment_with_another_architecture(packages: PackageFactory) -> None:
    info = packages.build()
    rewrite(info, layer_rel(2), lambda f: f.set("general.architecture", V.STRING, "qwen2"))
    report = certify_dir(info.root)
    [message] = only(report, "architecture_mismatch")
    assert "'qwen2'" in message and "'llama'" in message
    assert finding_of(report, "architecture_mismatch").path == layer_rel(2)


def test_fragment_without_architecture(packages: PackageFactory) -> None:
    info = packages.build()

    def drop(f: GGUFFile) -> None:
        f.kvs = [kv for kv in f.kvs if kv.key != "general.architecture"]

    rewrite(info, layer_rel(0), drop)
    [message] = only(certify_dir(info.root), "architecture_mismatch")
    assert "no general.architecture" in message


def test_block_count_disagrees_with_layer_count(packages: PackageFactory) -> None:
    info = packages.build()
    rewrite(info, "shared/metadata.gguf", lambda f: f.set("llama.block_count", V.UINT32, 5))
    [message] = only(certify_dir(info.root), "layer_count_mismatch")
    assert "llama.block_count is 5" in message and "layer_count is 4" in message


def test_block_count_disagreement_is_one_finding_per_value(packages: PackageFactory) -> None:
    info = packages.build(layers=6)
    packages.edit_manifest(info, lambda m: m.update(layer_count=7))
    report = certify_dir(info.root)
    mismatches = [f for f in report.findings if f.code == "layer_count_mismatch"]
    assert len(mismatches) == 1
    assert "in 9 fragment(s)" in mismatches[0].message  # 3 shared + 6 layers, all say 6


def test_activation_width_disagrees_with_embedding_length(packages: PackageFactory) -> None:
    info = packages.build()
    packages.edit_manifest(info, lambda m: m.update(activation_width=128))
    report = certify_dir(info.root)
    [message] = only(report, "activation_width_mismatch")
    assert "llama.embedding_length is 64" in message
    assert finding_of(report, "activation_width_mismatch").severity == "warning"


def test_tensor_name_unknown_to_the_architecture(packages: PackageFactory) -> None:
    info = packages.build()
    for i in range(2):
        rewrite(info, layer_rel(i), adding(RawTensor(f"blk.{i}.bogus.weight", (8,), int(Q.F32),
                                                     bytes(32))))
    report = certify_dir(info.root)
    [message] = only(report, "unexpected_tensor_for_architecture")
    assert "blk.{N}.bogus.weight" in message and "'llama'" in message
    assert finding_of(report, "unexpected_tensor_for_architecture").severity == "warning"


def test_nonstandard_suffix_is_unexpected(packages: PackageFactory) -> None:
    info = packages.build()
    rewrite(info, layer_rel(0), lambda f: f.tensors.append(
        RawTensor("blk.0.attn_q.scale", (8,), int(Q.F32), bytes(32))))
    only(certify_dir(info.root), "unexpected_tensor_for_architecture")


@pytest.mark.parametrize("rel,name", [
    ("shared/embeddings.gguf", "token_embd.weight"),
    ("shared/output.gguf", "output_norm.weight"),
    (layer_rel(2), "blk.2.attn_norm.weight"),
])
def test_missing_required_tensor(packages: PackageFactory, rel: str, name: str) -> None:
    info = packages.build()
    drop_tensors(info, rel, keep=lambda n: n != name)
    report = certify_dir(info.root)
    [message] = only(report, "missing_required_tensor")
    assert name in message and rel in message


def test_output_weight_may_be_tied_to_the_embeddings(packages: PackageFactory) -> None:
    info = packages.build()
    drop_tensors(info, "shared/output.gguf", keep=lambda n: n != "output.weight")
    assert gguf_codes(certify_dir(info.root)) == set()


def test_missing_required_tensor_says_where_it_went(packages: PackageFactory) -> None:
    info = packages.build()
    move_tensor(info, "output_norm.weight", "shared/output.gguf", "shared/embeddings.gguf")
    report = certify_dir(info.root)
    assert gguf_codes(report) == {"missing_required_tensor"}
    assert "found in shared/embeddings.gguf" in finding_of(report,
                                                           "missing_required_tensor").message


# --- robustness: nothing here may crash whatever the manifest or headers look like -------------

MY_CHECKS = {"gguf_structure", "gguf_manifest_counts", "tensor_ownership", "gguf_architecture",
             "native_mtp_tensors", "glm_dsa_contract", "source_parity"}


def _run_mine(view: PackageView) -> list[Any]:
    checks = [c for c in all_checks() if c.name in MY_CHECKS]
    assert {c.name for c in checks} == MY_CHECKS
    findings, runs = run_checks(view, checks)
    assert all(r.status != "error" for r in runs), [(r.name, r.details) for r in runs]
    return findings


def test_no_manifest_and_broken_headers_do_not_crash() -> None:
    view = PackageView(ref=RefInfo(kind="local", pinned=False), display_ref="x", local_dir=None,
                       manifest_raw=None, parsed=ParsedManifest(None),
                       headers={"layers/layer-00000.gguf": HeaderProblem("gguf_truncated", "cut",
                                                                       9)})
    assert _run_mine(view) == []


@pytest.mark.parametrize("field", ["shared", "layers", "layer_count", "activation_width",
                                   "generation", "projectors", "source_model"])
def test_any_manifest_shape_is_tolerated(packages: PackageFactory, field: str) -> None:
    info = packages.build("glm")
    view = load_local_package(str(info.root), display_ref=str(info.root),
                              options=CertOptions(verify_sha256=False))
    manifest = view.manifest
    assert manifest is not None
    for value in GARBAGE:
        manifest[field] = value
        _run_mine(view)
    manifest["layers"] = [{"layer_index": v, "path": layer_rel(0)} for v in GARBAGE]
    _run_mine(view)


def test_header_errors_are_skipped_by_the_package_wide_checks(packages: PackageFactory) -> None:
    info = packages.build("glm")
    view = load_local_package(str(info.root), display_ref=str(info.root),
                              options=CertOptions(verify_sha256=False))
    for path in list(view.headers):
        view.headers[path] = HeaderProblem("gguf_truncated", "cut", 0)
    assert {f.code for f in _run_mine(view)} == {"gguf_truncated"}
