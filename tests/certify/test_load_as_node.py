"""Load a package as a node would: materialized stages and split parity, on a real model.

SmolLM2-135M (real weights) is split by packagegen into v1 and v2 packages once per session.
Every structural check passes on the sabotaged copies (their manifest hashes, and the v2
package id, are rewritten to match), so only running the reassembled model can tell.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from meshcert.certify.formats.package_id import compute_package_id
from meshcert.certify.materialize import materialize_stages
from meshcert.certify.report import CertReport
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.sources.local import load_local_package
from meshcert.certify.split_parity import ParityRequest, run_parity
from meshcert.certify.view import CertOptions
from meshcert.certify.workers.llama_reopen import reopen
from meshcert.cli import app
from meshcert.core.gguf.model import GGUFHeader
from meshcert.core.gguf.reader import read_header_file
from tests.support.real_models import gemma3_path, smollm2_path
from tests.support.splits import split_v1, split_v2

pytestmark = pytest.mark.slow
PROMPTS = ["The capital of France is"]
TOKENS = 6


@pytest.fixture(scope="session")
def smollm2() -> Path:
    return smollm2_path()


@pytest.fixture(scope="session")
def split_packages(smollm2: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("smollm2-split")
    split_v1(smollm2, base / "v1", model_id="HuggingFaceTB/SmolLM2-135M-Instruct:Q4_1")
    split_v2(smollm2, base / "v2", model_id="HuggingFaceTB/SmolLM2-135M-Instruct:Q4_1")
    return {"v1": base / "v1", "v2": base / "v2"}


@pytest.fixture(scope="session")
def gemma3_packages(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Path]]:
    source = gemma3_path()
    base = tmp_path_factory.mktemp("gemma3-split")
    split_v1(source, base / "v1", model_id="google/gemma-3-270m:Q4_K_M")
    split_v2(source, base / "v2", model_id="google/gemma-3-270m:Q4_K_M")
    return source, {"v1": base / "v1", "v2": base / "v2"}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _tensor_span(path: Path, name: str) -> tuple[int, int]:
    header = read_header_file(path)
    assert isinstance(header, GGUFHeader), header
    info = next(t for t in header.tensors if t.name == name)
    return header.data_offset + info.offset, info.n_bytes


def _rehash(root: Path, changed: list[str]) -> None:
    """Rewrite the manifest so its hashes (and the v2 package id) match the edited files."""
    path = root / "model-package.json"
    manifest: dict[str, Any] = json.loads(path.read_text())
    if manifest["schema_version"] == 2:
        entries = manifest["artifact_catalog"]["entries"]
    else:
        entries = [*manifest["shared"].values(), *manifest["layers"]]
    for entry in entries:
        if entry["path"] in changed:
            entry["sha256"] = _sha256(root / entry["path"])
    if manifest["schema_version"] == 2:
        manifest["package_id"] = compute_package_id(manifest)
    path.write_text(json.dumps(manifest, indent=2) + "\n")


def _layer(fmt: str, b: int) -> str:
    return f"layers/layer-{b:05d}.gguf" if fmt == "v2" else f"layers/layer-{b:03d}.gguf"


def flip_one_byte(root: Path, fmt: str) -> str:
    rel = _layer(fmt, 5)
    offset, size = _tensor_span(root / rel, "blk.5.attn_q.weight")
    with open(root / rel, "r+b") as handle:
        handle.seek(offset + size // 2)
        byte = handle.read(1)[0]
        handle.seek(offset + size // 2)
        handle.write(bytes([byte ^ 0x5A]))
    _rehash(root, [rel])
    return rel


def swap_between_layers(root: Path, fmt: str) -> str:
    """blk.3.ffn_down and blk.4.ffn_down (same shape and type) trade their bytes."""
    a, b = _layer(fmt, 3), _layer(fmt, 4)
    span_a = _tensor_span(root / a, "blk.3.ffn_down.weight")
    span_b = _tensor_span(root / b, "blk.4.ffn_down.weight")
    assert span_a[1] == span_b[1]
    with open(root / a, "r+b") as fa, open(root / b, "r+b") as fb:
        fa.seek(span_a[0])
        data_a = fa.read(span_a[1])
        fb.seek(span_b[0])
        data_b = fb.read(span_b[1])
        fa.seek(span_a[0])
        fa.write(data_b)
        fb.seek(span_b[0])
        fb.write(data_a)
    _rehash(root, [a, b])
    return a


Sabotage = Callable[[Path, str], str]


def sabotaged(split_packages: dict[str, Path], tmp_path: Path, fmt: str,
              sabotage: Sabotage) -> Path:
    root = tmp_path / f"{fmt}-sabotaged"
    shutil.copytree(split_packages[fmt], root)
    sabotage(root, fmt)
    return root


def certify(root: Path, source: Path, tmp_path: Path, **kwargs: Any) -> CertReport:
    parity = ParityRequest(source=str(source), prompts=PROMPTS, tokens=TOKENS,
                           temp_dir=str(tmp_path))
    return certify_package(CertRequest(
        model=str(root), materialize=True, materialize_dir=str(tmp_path / "stages"),
        parity=parity, **kwargs))


def gate(report: CertReport, name: str) -> Any:
    return next(g for g in report.runtime_gates if g.name == name)


def structural_errors(report: CertReport) -> list[str]:
    return [f.code for f in report.findings if f.severity == "error"
            and f.check not in ("split_parity", "stage_materialization")]


@pytest.mark.parametrize("fmt", ["v1", "v2"])
def test_the_split_real_model_passes_parity_and_its_stages_reopen_in_llama_cpp(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path, fmt: str) -> None:
    report = certify(split_packages[fmt], smollm2, tmp_path)
    assert report.status == "passed", [f.message for f in report.findings]
    parity = gate(report, "split_parity")
    assert parity.status == "passed" and parity.measurements["prompts"] == 1
    assert parity.measurements["assembled_bytes"] > 90_000_000
    for stage in report.materialized_stages:
        path = Path(stage.materialized_path or "")
        assert path.is_file() and path.stat().st_size == stage.materialized_bytes
        assert path.is_relative_to(tmp_path / "stages")
        n_tensors, n_kv = reopen(str(path))  # llama.cpp's own parser
        assert n_tensors > 100 and n_kv > 20
    # every temporary file of the parity run is gone
    assert not list(tmp_path.glob("meshcert-parity-*"))


@pytest.mark.parametrize(("fmt", "sabotage"), [("v1", flip_one_byte), ("v2", flip_one_byte),
                                               ("v2", swap_between_layers)])
def test_sabotage_that_every_structural_check_passes_fails_split_parity(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path, fmt: str,
        sabotage: Sabotage) -> None:
    root = sabotaged(split_packages, tmp_path, fmt, sabotage)
    report = certify(root, smollm2, tmp_path)
    assert structural_errors(report) == []
    assert report.package_gate.status == "failed"
    parity = gate(report, "split_parity")
    assert parity.status == "failed" and report.status == "failed"
    assert parity.measurements["position"] >= 0 and parity.measurements["max_logit_diff"] > 0
    mismatch = [f for f in report.findings if f.code == "split_parity_mismatch"]
    assert len(mismatch) == 1 and "prompt 0" in mismatch[0].message
    assert f"generated position {parity.measurements['position']}" in mismatch[0].message


def test_the_cli_fails_a_swapped_v1_package_naming_split_parity(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path) -> None:
    root = sabotaged(split_packages, tmp_path, "v1", swap_between_layers)
    prompts = tmp_path / "prompts.txt"
    prompts.write_text("\n".join(PROMPTS) + "\n")
    out = tmp_path / "cert.json"
    result = CliRunner().invoke(app, [
        "models", "certify", str(root), "--package-only", "--materialize",
        "--materialize-dir", str(tmp_path / "stages"), "--parity", str(smollm2),
        "--parity-prompts", str(prompts), "--parity-tokens", str(TOKENS),
        "--report-out", str(out), "--quiet"])
    assert result.exit_code == 1, result.output
    report = CertReport.model_validate_json(out.read_text())
    assert structural_errors(report) == []
    assert gate(report, "split_parity").status == "failed"
    assert [f.code for f in report.findings if f.severity == "error"] == [
        "split_parity_mismatch"]


def test_parity_refuses_before_writing_anything_when_the_model_is_too_big(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    request = ParityRequest(source=str(smollm2), prompts=PROMPTS, tokens=TOKENS,
                            max_bytes=10_000_000, temp_dir=str(work))
    report = certify_package(CertRequest(model=str(split_packages["v1"]), parity=request))
    parity = gate(report, "split_parity")
    assert report.status == "incomplete" and parity.status == "incomplete"
    assert "--parity-max-bytes 10,000,000" in (parity.details or "")
    header = read_header_file(smollm2)
    assert isinstance(header, GGUFHeader)
    needed = sum(t.n_bytes for t in header.tensors)  # says how much it needs
    assert f"needs {needed:,} bytes" in (parity.details or "")
    assert list(work.iterdir()) == []


def test_materialized_stages_are_reused_when_their_provenance_matches(
        split_packages: dict[str, Path], tmp_path: Path) -> None:
    root = split_packages["v2"]
    view = load_local_package(str(root), display_ref=str(root), options=CertOptions())
    first = materialize_stages(view, tmp_path)
    assert [b.reused for b in first] == [False, False] and all(b.path for b in first)
    again = materialize_stages(view, tmp_path)
    assert [b.reused for b in again] == [True, True]
    assert [b.path for b in again] == [b.path for b in first]
    # a stage file that no longer matches its recorded size is rebuilt, not trusted
    damaged = Path(first[1].path or "")
    with open(damaged, "r+b") as handle:
        handle.truncate(damaged.stat().st_size // 2)
    third = materialize_stages(view, tmp_path)
    assert [b.reused for b in third] == [True, False]
    assert damaged.stat().st_size == first[1].size


def test_a_stage_whose_part_is_cut_short_fails_materialization(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path) -> None:
    root = tmp_path / "v1-cut"
    shutil.copytree(split_packages["v1"], root)
    rel = _layer("v1", 20)
    with open(root / rel, "r+b") as handle:
        handle.truncate((root / rel).stat().st_size - 4096)
    manifest = json.loads((root / "model-package.json").read_text())
    layer = manifest["layers"][20]
    layer["artifact_bytes"] = (root / rel).stat().st_size
    (root / "model-package.json").write_text(json.dumps(manifest, indent=2))
    _rehash(root, [rel])
    report = certify_package(CertRequest(model=str(root), materialize=True,
                                         materialize_dir=str(tmp_path / "stages")))
    failed = [f for f in report.findings if f.code == "stage_materialization_failed"]
    assert len(failed) == 1 and "cert-stage-1" in failed[0].message
    assert "past the end" in failed[0].message
    assert report.package_gate.status == "failed"
    stage1 = next(s for s in report.materialized_stages if s.stage_id == "cert-stage-1")
    assert stage1.materialized_path == str(root)  # no stage file: it keeps the package dir
    assert not list((tmp_path / "stages").rglob("*.tmp"))


@pytest.mark.parametrize("fmt", ["v1", "v2"])
def test_gemma3_split_passes_parity(gemma3_packages: tuple[Path, dict[str, Path]],
                                    tmp_path: Path, fmt: str) -> None:
    source, packages = gemma3_packages
    report = certify(packages[fmt], source, tmp_path)
    assert report.status == "passed", [f.message for f in report.findings]
    assert gate(report, "split_parity").status == "passed"
    assert all(Path(s.materialized_path or "").is_file() for s in report.materialized_stages)


def test_gemma3_with_one_flipped_byte_fails_parity(
        gemma3_packages: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    source, packages = gemma3_packages
    root = sabotaged(packages, tmp_path, "v1", flip_one_byte)
    report = certify(root, source, tmp_path)
    assert structural_errors(report) == []
    assert gate(report, "split_parity").status == "failed" and report.status == "failed"


class _CtrlC:
    """A progress observer that presses Ctrl-C when a task with `label` in its name begins
    (a real KeyboardInterrupt, at a point a user could press it)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.begun: list[str] = []

    def begin(self, label: str, total: int | None) -> None:
        self.begun.append(label)
        if self.label in label:
            raise KeyboardInterrupt

    def advance(self, amount: int) -> None:
        return None

    def end(self) -> None:
        return None


@pytest.mark.parametrize("when", ["reassembling", "source model"])
def test_ctrl_c_during_parity_leaves_no_temporary_file(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path, when: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    request = ParityRequest(source=str(smollm2), prompts=PROMPTS, tokens=TOKENS,
                            temp_dir=str(work))
    view = load_local_package(str(split_packages["v2"]), display_ref="v2",
                              options=CertOptions())
    progress = _CtrlC(when)
    with pytest.raises(KeyboardInterrupt):
        run_parity(view, request, progress)
    assert any(when in label for label in progress.begun)
    assert list(work.iterdir()) == []


def test_without_llama_cpp_python_both_are_not_run_never_passed(
        split_packages: dict[str, Path], smollm2: Path, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from meshcert.certify.workers import llama_library

    monkeypatch.setattr(llama_library, "package_dirs", lambda: [])  # as if not installed
    report = certify(split_packages["v1"], smollm2, tmp_path)
    assert report.status == "incomplete"
    assert gate(report, "split_parity").status == "incomplete"
    not_run = [f.message for f in report.findings if f.code == "check_not_run"]
    assert len(not_run) == 3 and all("llama-cpp-python is not installed" in m for m in not_run)
    assert not list((tmp_path / "stages").rglob("*.gguf"))


def test_an_unwritable_stage_dir_is_incomplete_not_a_package_fault(
        split_packages: dict[str, Path], tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache dir should be")
    report = certify_package(CertRequest(model=str(split_packages["v1"]), materialize=True,
                                         materialize_dir=str(blocker)))
    assert report.status == "incomplete" and report.package_gate.status == "incomplete"
    not_run = [f for f in report.findings if f.code == "check_not_run"]
    assert len(not_run) == 2 and all("cannot write" in f.message for f in not_run)
