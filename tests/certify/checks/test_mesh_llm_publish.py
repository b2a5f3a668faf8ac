"""`models certify` warns `mesh_llm_publish_would_refuse` for a package mesh-llm's HF
publication job refuses though the format accepts it (mesh-llm-0.79.md §6.1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.certify.v2_packages import build_v2, edit_manifest
from tests.conftest import certify_dir

CODE = "mesh_llm_publish_would_refuse"


def _warnings(root: Path) -> list[str]:
    report = certify_dir(root)
    return [f.message for f in report.findings if f.code == CODE]


@pytest.mark.parametrize("edit,says", [
    (lambda m: m["source_model"].update(revision="main"), "'main' is not a 40-hex commit"),
    (lambda m: m["source_model"].update(revision="5F1C2B3A4D5E6F708192A3B4C5D6E7F8091A2B3C"),
     "upper-case hex"),
    (lambda m: m["source_model"].pop("repo"), "source_model.repo is absent"),
])
def test_a_package_the_job_refuses_is_a_warning_naming_the_rule(
        tmp_path: Path, edit: Any, says: str) -> None:
    pkg = build_v2(tmp_path)
    assert _warnings(pkg.root) == []
    edit_manifest(pkg, edit)
    report = certify_dir(pkg.root)
    found = [f for f in report.findings if f.code == CODE]
    assert len(found) == 1 and says in found[0].message
    assert found[0].severity == "warning" and found[0].path == "model-package.json"
    assert "mesh-llm's HF publication job would refuse" in found[0].message


def test_a_duplicate_and_an_empty_artifact_are_named(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)

    def duplicate(m: dict[str, Any]) -> None:
        entries = m["artifact_catalog"]["entries"]
        entries.append(dict(entries[-1], id="again"))

    edit_manifest(pkg, duplicate)
    [message] = _warnings(pkg.root)
    assert "listed more than once" in message
