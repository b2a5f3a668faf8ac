"""Real models split into real packages (v1 as the writer writes it, v2 in both layouts)
certify `passed`, alone and against their source (`--source`); a one-byte change to a tensor
with every hash updated is caught by `--source` alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from meshcert.certify.report import CertReport
from tests.certify.v2_packages import flip_tensor_byte, refresh_artifact
from tests.conftest import certify_dir
from tests.support.real_models import GEMMA3, SMOLLM2, gemma3_path, smollm2_path
from tests.support.splits import SplitPackage, split_v1, split_v2, with_extra_tensors

pytestmark = pytest.mark.slow
SMOL_ID = "HuggingFaceTB/SmolLM2-135M-Instruct-GGUF:Q4_1"
SOURCE_COMMIT = "5f1c2b3a4d5e6f708192a3b4c5d6e7f8091a2b3c"  # hand-made: a pinned, lower-case commit


def _problems(report: CertReport) -> list[str]:
    return [f"{f.code}: {f.message}" for f in report.findings if f.severity != "info"]


@pytest.fixture(scope="module")
def smol_v2(tmp_path_factory: pytest.TempPathFactory) -> SplitPackage:
    return split_v2(smollm2_path(), tmp_path_factory.mktemp("smol") / "v2", model_id=SMOL_ID,
                    repo="HuggingFaceTB/SmolLM2-135M-Instruct", revision=SOURCE_COMMIT)


@pytest.fixture(scope="module")
def smol_v1(tmp_path_factory: pytest.TempPathFactory) -> SplitPackage:
    return split_v1(smollm2_path(), tmp_path_factory.mktemp("smol") / "v1", model_id=SMOL_ID,
                    repo="HuggingFaceTB/SmolLM2-135M-Instruct", revision=SOURCE_COMMIT)


def test_smollm2_v2_passes_alone_and_against_its_source(smol_v2: SplitPackage) -> None:
    alone = certify_dir(smol_v2.root)
    assert alone.status == "passed" and _problems(alone) == []
    against = certify_dir(smol_v2.root, source_gguf=str(smollm2_path()))
    assert against.status == "passed", _problems(against)
    assert "source_parity" in {c.name for c in against.checks}


def test_smollm2_v1_as_written_passes_alone_and_against_its_source(
        smol_v1: SplitPackage) -> None:
    assert _problems(certify_dir(smol_v1.root)) == []
    against = certify_dir(smol_v1.root, source_gguf=str(smollm2_path()))
    assert against.status == "passed", _problems(against)


@pytest.mark.parametrize("layout", ["v2", "v1"])
def test_smollm2_certified_with_gemma3_as_source_is_one_finding(
        smol_v2: SplitPackage, smol_v1: SplitPackage, layout: str) -> None:
    """Another real model's GGUF as --source: one error naming both SHA-256s (the file's and
    the manifest's), where a per-tensor comparison gave 86."""
    package = smol_v2 if layout == "v2" else smol_v1
    report = certify_dir(package.root, source_gguf=str(gemma3_path()))
    problems = [f for f in report.findings if f.severity != "info"]
    assert [f.code for f in problems] == ["source_sha256_mismatch"], _problems(report)
    message = problems[0].message
    assert GEMMA3.sha256 in message and SMOLLM2.sha256 in message
    assert "it is a gemma3 model, the package a llama model" in message
    assert report.status == "failed"


def test_smollm2_with_gemma3_as_parity_source_is_refused_before_loading(
        smol_v2: SplitPackage, tmp_path: Path) -> None:
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.split_parity import ParityRequest

    report = certify_package(CertRequest(model=str(smol_v2.root), parity=ParityRequest(
        source=str(gemma3_path()), temp_dir=str(tmp_path))))
    found = [f for f in report.findings if f.check == "split_parity"]
    assert [f.code for f in found] == ["split_parity_mismatch"]
    assert "it is a gemma3 model, the package a llama model" in found[0].message
    assert "it has 18 blocks, the package 30 layers" in found[0].message
    assert report.status == "failed"


def test_gemma3_v2_in_the_earlier_layout_passes(tmp_path: Path) -> None:
    pkg = split_v2(gemma3_path(), tmp_path / "gemma", model_id="google/gemma-3-270m:Q4_K_M",
                   layout="legacy", repo="google/gemma-3-270m", revision=SOURCE_COMMIT)
    report = certify_dir(pkg.root, source_gguf=str(gemma3_path()))
    assert report.status == "passed", _problems(report)
    assert report.layer_count == 18


def test_one_changed_tensor_byte_with_updated_hashes_is_caught_by_source(
        tmp_path: Path) -> None:
    pkg = split_v2(smollm2_path(), tmp_path / "v2", model_id=SMOL_ID)
    layer = pkg.root / "layers/layer-00007.gguf"
    data = bytearray(layer.read_bytes())
    data[-100] ^= 0xFF  # inside the last tensor's bytes
    layer.write_bytes(bytes(data))
    refresh_artifact(pkg, "layers/layer-00007.gguf")
    assert certify_dir(pkg.root).status == "passed"  # every structural check is satisfied
    report = certify_dir(pkg.root, source_gguf=str(smollm2_path()))
    mismatches = [f for f in report.findings if f.code == "source_tensor_data_mismatch"]
    assert [f.path for f in mismatches] == ["layers/layer-00007.gguf"]
    assert report.status == "failed"


@pytest.fixture(scope="module")
def smol_llama3_style(tmp_path_factory: pytest.TempPathFactory) -> SplitPackage:
    """SmolLM2 with a Llama-3-style rope_freqs.weight added first (ones: rope unchanged),
    split as the real v1 writer splits it: the tensor copied into every fragment."""
    base = tmp_path_factory.mktemp("smol-rope")
    head_dim = 64  # SmolLM2-135M: 576 wide, 9 heads
    source = with_extra_tensors(smollm2_path(), base / "SmolLM2-rope.gguf",
                                [("rope_freqs.weight", np.ones(head_dim // 2, np.float32))])
    return split_v1(source, base / "v1", model_id=SMOL_ID,
                    repo="HuggingFaceTB/SmolLM2-135M-Instruct", revision=SOURCE_COMMIT)


def test_smollm2_with_a_metadata_role_tensor_in_every_fragment_passes(
        smol_llama3_style: SplitPackage) -> None:
    pkg = smol_llama3_style
    assert pkg.manifest["shared"]["metadata"]["tensor_count"] == 1
    assert all(entry["tensor_count"] >= 2 for entry in pkg.manifest["layers"])
    assert _problems(certify_dir(pkg.root)) == []
    against = certify_dir(pkg.root, source_gguf=str(pkg.source_path))
    assert against.status == "passed", _problems(against)


def test_smollm2_with_one_differing_rope_freqs_copy_fails(
        smol_llama3_style: SplitPackage, tmp_path: Path) -> None:
    import shutil

    copy = SplitPackage(tmp_path / "v1", dict(smol_llama3_style.manifest),
                        smol_llama3_style.source_path)
    shutil.copytree(smol_llama3_style.root, copy.root)
    flip_tensor_byte(copy, "layers/layer-017.gguf", "rope_freqs.weight")
    report = certify_dir(copy.root)
    assert [f.path for f in report.findings if f.code == "metadata_tensor_copies_differ"] == [
        "layers/layer-017.gguf"]
    assert report.status == "failed"


def test_smollm2_with_a_metadata_role_tensor_materializes_and_keeps_parity(
        smol_llama3_style: SplitPackage, tmp_path: Path) -> None:
    """The stages take metadata.gguf's copy once, and the model reassembled from the
    package computes what the source (with its rope_freqs.weight) computes."""
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.split_parity import ParityRequest

    pkg = smol_llama3_style
    report = certify_package(CertRequest(
        model=str(pkg.root), materialize=True, materialize_dir=str(tmp_path / "stages"),
        parity=ParityRequest(source=str(pkg.source_path), prompts=["The capital of France is"],
                             tokens=4, temp_dir=str(tmp_path))))
    assert report.status == "passed", _problems(report)
    parity = next(g for g in report.runtime_gates if g.name == "split_parity")
    assert parity.status == "passed"
