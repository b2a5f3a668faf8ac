"""v1 packages exactly as `skippy-model-package write-package` writes them (package-v2.md,
"What the real v1 writer writes") certify as mesh-llm certifies them."""

from __future__ import annotations

from pathlib import Path

from tests.certify.v2_packages import build_v1, edit_manifest
from tests.conftest import PackageFactory, certify_dir


def test_a_writer_made_v1_package_passes_with_nothing_to_warn(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path)
    manifest = pkg.manifest
    assert list(manifest)[:6] == ["schema_version", "model_id", "source_model", "format",
                                  "layer_count", "activation_width"]
    assert manifest["layers"][0]["path"] == "layers/layer-000.gguf"  # 3 digits, as published
    assert Path(manifest["source_model"]["path"]).is_absolute()
    size = pkg.source_path.stat().st_size  # real values where mesh-llm's writer puts null
    assert manifest["source_model"]["files"] == [
        {"path": pkg.source_path.name, "size_bytes": size,
         "sha256": manifest["source_model"]["sha256"]}]
    report = certify_dir(pkg.root)
    assert report.status == "passed"
    assert [f.code for f in report.findings if f.severity != "info"] == []
    assert report.package_format == "v1" and report.package_id is None
    assert report.source_model_bytes == size  # null sizes: the reproduction test below


def test_the_writers_speculative_shape_passes(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path, kind="glm-dsa")
    spec = pkg.manifest["generation"]["speculative_decoding"]
    assert spec["strategies"]["mtp"]["proposer"] == "mtp"
    assert spec["strategies"]["mtp"]["prediction_depth"] == 1  # repeated beside the proposer
    report = certify_dir(pkg.root)
    assert report.status == "passed", [f.message for f in report.findings if f.severity != "info"]


def test_the_issue_reproduction_null_files_and_an_absolute_source_path(
        packages: PackageFactory) -> None:
    info = packages.build("llama")

    def as_the_writer_writes(m: dict) -> None:
        m["source_model"]["path"] = "/data/mount/Model-Q4_K_M.gguf"
        m["source_model"]["files"] = [{"path": "Model-Q4_K_M.gguf", "size_bytes": None,
                                       "sha256": None}]

    packages.edit_manifest(info, as_the_writer_writes)
    report = certify_dir(info.root)
    found = {f.code for f in report.findings}
    assert not found & {"invalid_source_model_sha256", "invalid_manifest_field"}
    assert not [f for f in report.findings if "/data/mount" in f.message]
    assert report.status == "passed"
    assert report.source_model_bytes is None


def test_present_source_file_values_keep_every_rule(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path)
    edit_manifest(pkg, lambda m: m["source_model"]["files"][0].update(sha256="xyz",
                                                                       size_bytes=-1))
    found = {f.code for f in certify_dir(pkg.root).findings}
    assert {"invalid_source_model_sha256", "invalid_manifest_field"} <= found


def test_the_card_may_name_the_source_by_its_base_name_only(tmp_path: Path) -> None:
    pkg = build_v1(tmp_path)
    readme = (pkg.root / "README.md").read_text()
    assert str(pkg.source_path) not in readme and pkg.source_path.name in readme
    assert "readme_missing_field" not in {f.code for f in certify_dir(pkg.root).findings}
