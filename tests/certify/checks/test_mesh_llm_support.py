"""Which mesh-llm can load a package (mesh-llm-0.79.md §4) and serve it split (§3.4), over
real tiny v2 packages. The version floors are the spec table's first "yes" per feature."""

from __future__ import annotations

from pathlib import Path

from meshcert.certify.report import CertReport
from tests.certify.publisher_packages import build_published
from tests.certify.v2_packages import build_v1, build_v2, edit_manifest
from tests.conftest import certify_dir


def messages(report: CertReport, code: str) -> list[str]:
    return [f.message for f in report.findings if f.code == code]


def test_base_v2_needs_the_oldest_v2_release(tmp_path: Path) -> None:
    report = certify_dir(build_v2(tmp_path).root)
    assert messages(report, "mesh_llm_minimum_version") == [
        "oldest mesh-llm that loads this manifest: 0.76.0 (package v2)"]
    assert report.mesh_llm is not None
    assert report.mesh_llm.minimum_version == "0.76.0"
    assert report.mesh_llm.minimum_reasons == ["package v2 >= 0.76.0"]


def test_publisher_fields_need_0_77_0(tmp_path: Path) -> None:
    report = certify_dir(build_published(tmp_path).root)
    assert messages(report, "mesh_llm_minimum_version") == [
        "oldest mesh-llm that loads this manifest: 0.77.0 "
        "(publisher_metadata and publisher_defaults)"]
    assert next(f for f in report.findings
                if f.code == "mesh_llm_minimum_version").severity == "info"


def test_request_defaults_need_0_78_1(tmp_path: Path) -> None:
    pkg = build_v2(tmp_path)
    edit_manifest(pkg, lambda m: m.update(generation={"request_defaults": {
        "selection": {"default": "recommended"}, "profiles": {"recommended": {}}}}))
    report = certify_dir(pkg.root)
    assert report.mesh_llm is not None and report.mesh_llm.minimum_version == "0.78.1"


def test_min_mesh_llm_below_the_need_is_an_error(tmp_path: Path) -> None:
    report = certify_dir(build_published(tmp_path).root, min_mesh_llm="0.76.2")
    assert messages(report, "mesh_llm_version_too_old") == [
        "the package needs mesh-llm >= 0.77.0 (publisher_metadata and publisher_defaults); "
        "mesh-llm 0.76.2 (--min-mesh-llm) refuses the manifest at parse time"]
    assert messages(report, "mesh_llm_minimum_version") == []
    assert report.status == "failed"


def test_min_mesh_llm_at_or_above_the_need_stays_a_note(tmp_path: Path) -> None:
    report = certify_dir(build_published(tmp_path).root, min_mesh_llm="0.77.0")
    assert messages(report, "mesh_llm_version_too_old") == []
    assert len(messages(report, "mesh_llm_minimum_version")) == 1


def test_v1_packages_name_no_version(tmp_path: Path) -> None:
    report = certify_dir(build_v1(tmp_path).root)
    assert messages(report, "mesh_llm_minimum_version") == []
    assert report.mesh_llm is None and report.node_defaults is None


def test_an_architecture_on_the_roster_has_no_warning(tmp_path: Path) -> None:
    report = certify_dir(build_v2(tmp_path).root)  # general.architecture "llama"
    assert messages(report, "architecture_not_split_certified") == []
    assert report.mesh_llm is not None
    assert (report.mesh_llm.architecture, report.mesh_llm.split_certified) == ("llama", True)
    # the report names the roster recipe it used: mesh-llm's newest (mesh-llm-0.79.md §6.4)
    assert report.mesh_llm.roster_recipe_used == (
        "mesh-llm @0007b7bd (skippy ABI 0.1.67, llama.cpp 5e03bdd8)")
    assert report.mesh_llm.roster_recipe == {
        "llama_upstream_sha": "5e03bdd8700948b9c41c54dd1b00f28a2aebc03f", "skippy_abi": "0.1.67"}


def test_an_architecture_off_the_roster_is_a_warning(tmp_path: Path) -> None:
    report = certify_dir(build_v2(tmp_path, kind="glm").root)  # "glm-dsa": not on the roster
    hits = [f for f in report.findings if f.code == "architecture_not_split_certified"]
    assert [(f.severity, f.path) for f in hits] == [("warning", "shared/metadata.gguf")]
    assert hits[0].message.startswith(
        "general.architecture 'glm-dsa' is not on mesh-llm's split-serving roster "
        "(split-certified.json) as meshcert knows it, recipe mesh-llm @0007b7bd (skippy ABI "
        "0.1.67, llama.cpp 5e03bdd8) (retrieved 2026-12-02)")
    assert "--allow-uncertified-split" in hits[0].message
    assert report.mesh_llm is not None and report.mesh_llm.split_certified is False
