"""The q2_K routed-down recipe rule: NextN/MTP layers keep their original down type."""

from __future__ import annotations

from pathlib import Path

from gguf import GGMLQuantizationType as Q

from meshcert.evidence.package_rules import check_nextn_down, load_package, read_source_header
from meshcert.evidence.report import PackageCheck
from meshcert.testing import PackageInfo, glm_dsa_spec, write_package


def _build(tmp: Path, name: str, **spec: object) -> PackageInfo:
    return write_package(glm_dsa_spec(**spec), tmp / name,  # type: ignore[arg-type]
                         source_dir=tmp / f"{name}-src")


def _check(info: PackageInfo, source: Path | None = None) -> PackageCheck:
    header = read_source_header(str(source)) if source else None
    return check_nextn_down(load_package(str(info.root)), str(info.root), header)


def test_recipe_applied_and_nextn_kept(tmp_path: Path) -> None:
    result = _check(_build(tmp_path, "ok", down_type=Q.Q2_K, nextn_down_type=Q.Q3_K))
    assert (result.status, result.recipe_applied, result.nextn_layers) == ("passed", True, [3])
    layer = result.layers[0]
    assert (layer.tensor, layer.ggml_type, layer.original_type) == (
        "blk.3.ffn_down_exps.weight", "q3_K", None)
    assert "no source GGUF: original type unknown" in layer.message


def test_nextn_layer_quantized_with_the_recipe_fails(tmp_path: Path) -> None:
    result = _check(_build(tmp_path, "bad", down_type=Q.Q2_K))
    assert result.status == "failed"
    assert result.messages == ["blk.3.ffn_down_exps.weight is q2_K: the NextN/MTP layer must "
                               "keep its original down-projection type"]


def test_recipe_not_applied(tmp_path: Path) -> None:
    result = _check(_build(tmp_path, "plain"))
    assert result.status == "not-applicable" and result.recipe_applied is False


def test_the_source_gguf_gives_the_original_type(tmp_path: Path) -> None:
    q3_source = _build(tmp_path, "q3").source_path
    q4_source = _build(tmp_path, "q4", down_type=Q.Q4_K).source_path
    assert q3_source is not None and q4_source is not None
    package = _build(tmp_path, "pkg", down_type=Q.Q2_K, nextn_down_type=Q.Q3_K)
    kept = _check(package, q3_source)
    assert kept.status == "passed" and kept.layers[0].original_type == "q3_K"
    changed = _check(package, q4_source)
    assert changed.status == "failed"
    assert changed.layers[0].message == ("blk.3.ffn_down_exps.weight is q3_K, the source has "
                                         "q4_K: must keep the source type")


def test_no_readable_header_is_unknown(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = check_nextn_down(load_package(str(tmp_path / "empty")), "empty")
    assert result.status == "unknown"
    assert "no GGUF header could be read" in result.messages
