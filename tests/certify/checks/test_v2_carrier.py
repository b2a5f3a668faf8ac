"""v2 with no carrier named (source_model.metadata_artifact_id missing, empty or unknown): the
manifest finding plus one saying the carrier cannot be identified; shared/metadata.gguf, a
carrier by its layout, is not bounds-checked as a plain GGUF; a file's own marker key still
exempts it from nothing."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gguf import GGUFValueType

from tests.certify.checks.gguf_edits import KV, Typed, rewrite_gguf
from tests.certify.v2_packages import build_v2, edit_manifest, refresh_artifact
from tests.conftest import certify_dir, codes
from tests.support.splits import SplitPackage

NOISE = {"gguf_tensor_out_of_bounds", "gguf_tensor_overlap", "gguf_tensor_data_not_dense",
         "gguf_truncated", "mesh_certify_would_fail"}


def _metadata_id(value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(m: dict[str, Any]) -> None:
        if value is None:
            del m["source_model"]["metadata_artifact_id"]
        else:
            m["source_model"]["metadata_artifact_id"] = value
    return edit


def _unidentified(report: Any) -> list[str]:
    return [f.message for f in report.findings if f.code == "check_not_run"
            and "carrier cannot be identified" in f.message]


@pytest.mark.parametrize(("value", "manifest_code"), [
    (None, "missing_value"), ("", "missing_value"), ("   ", "missing_value"),
    ("nope", "unknown_artifact")], ids=["missing", "empty", "blank", "unknown"])
def test_an_unnamed_carrier_is_the_manifest_finding_plus_one_saying_so(
        tmp_path: Path, value: Any, manifest_code: str) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, _metadata_id(value))
    report = certify_dir(pkg.root)
    found = codes(report)
    assert manifest_code in found and not NOISE & found, found
    [message] = _unidentified(report)
    assert "shared/metadata.gguf is the carrier by its layout" in message
    assert report.status == "failed"


def _marker(kv: KV) -> None:
    kv["skippy.package.metadata_only"] = Typed(True, GGUFValueType.BOOL)


def _truncate(path: Path, by: int = 64) -> None:
    os.truncate(path, path.stat().st_size - by)


def test_a_payload_claiming_to_be_a_carrier_is_still_bounds_checked(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, _metadata_id("nope"))
    layer = pkg.root / "layers/layer-00001.gguf"
    rewrite_gguf(layer, _marker)
    _truncate(layer)
    refresh_artifact(pkg, "layers/layer-00001.gguf")
    report = certify_dir(pkg.root)
    assert "layers/layer-00001.gguf" in {f.path for f in report.findings
                                         if f.code == "gguf_tensor_out_of_bounds"}


def test_a_metadata_gguf_with_a_data_section_is_no_carrier_by_layout(tmp_path: Path) -> None:
    """Only the layout exempts: shared/metadata.gguf holding tensor data (and saying it is a
    carrier) is checked as the plain GGUF it is."""
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, _metadata_id(None))
    carrier = pkg.root / "shared/metadata.gguf"
    carrier.write_bytes((pkg.root / "shared/common.gguf").read_bytes())
    rewrite_gguf(carrier, _marker)
    _truncate(carrier)
    refresh_artifact(pkg, "shared/metadata.gguf")
    report = certify_dir(pkg.root)
    assert "shared/metadata.gguf" in {f.path for f in report.findings
                                      if f.code == "gguf_tensor_out_of_bounds"}
    [message] = _unidentified(report)
    assert "by its layout" not in message


def test_a_named_carrier_still_gets_no_unidentified_finding(tmp_path: Path) -> None:
    pkg: SplitPackage = build_v2(tmp_path)
    report = certify_dir(pkg.root)
    assert _unidentified(report) == [] and report.status == "passed"
