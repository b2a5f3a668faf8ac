"""`meshcert catalog recheck --mesh-llm X.Y.Z`: the catalog's packages certified against a
release, the release matrix written (package x release), and one discussion opened on the repo
of a package the release refuses, never two."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from meshcert.cli import app
from tests.certify.publisher_packages import build_published
from tests.support.catalog_packages import (
    PackageShelf,
    catalog_files,
    package_ref,
    variant,
    write_entry,
)
from tests.support.hub_server import FakeHub
from tests.support.serve_rig import BOT, BOT_TOKEN, ServeRig

CATALOG = "meshllm/catalog"
TITLE = "meshcert: mesh-llm 0.76.2 refuses this package"


@pytest.fixture
def catalog(rig: ServeRig, hub: FakeHub, shelf: PackageShelf, tmp_path: Path,
            monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A catalog of a base v2 package (loads on 0.76) and one with publisher files (0.77+)."""
    monkeypatch.setenv("HF_TOKEN", BOT_TOKEN)
    base = hub.publish_dir("meshllm/base-layers", shelf.v2())
    newer = hub.publish_dir("meshllm/publisher-layers", build_published(tmp_path / "pub").root)
    root = tmp_path / "catalog"
    write_entry(root, "meshcert/tiny-llama", {
        "Q4": variant(package_ref("meshllm/base-layers", revision=base)),
        "F16": variant(package_ref("meshllm/publisher-layers", revision=newer))})
    hub.create_repo(CATALOG, repo_type="dataset")
    hub.commit(CATALOG, catalog_files(root), repo_type="dataset")
    return {"base": base, "newer": newer}


def recheck(release: str, matrix: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [
        "catalog", "recheck", f"hf://datasets/{CATALOG}", "--mesh-llm", release,
        "--matrix", str(matrix), "--open-discussions"])
    return result.exit_code, result.output


def bot_discussions(hub: FakeHub, repo: str) -> list[str]:
    found = hub.get_repo(repo)
    assert found is not None
    return [d.title for d in found.discussions if d.author == BOT]


def test_the_matrix_is_written_and_a_refused_package_gets_one_discussion(
        catalog: dict[str, str], hub: FakeHub, tmp_path: Path) -> None:
    matrix = tmp_path / "release-matrix.json"
    code, output = recheck("0.76.2", matrix)
    assert code == 1, output
    assert f"refused  meshllm/publisher-layers@{catalog['newer']} (mesh_llm_version_too_old)" \
        in output
    assert f"loads    meshllm/base-layers@{catalog['base']}" in output
    assert bot_discussions(hub, "meshllm/publisher-layers") == [TITLE]
    assert bot_discussions(hub, "meshllm/base-layers") == []
    repo = hub.get_repo("meshllm/publisher-layers")
    assert repo is not None
    body = repo.discussions[0].description
    assert "mesh-llm 0.76.2 refuses `meshllm/publisher-layers@" in body
    assert "- `mesh_llm_version_too_old`: " in body
    again, output = recheck("0.76.2", matrix)
    assert again == 1 and "discussion opened" not in output
    assert bot_discussions(hub, "meshllm/publisher-layers") == [TITLE]  # never two
    assert recheck("0.79.0", matrix)[0] == 0
    table = json.loads(matrix.read_text())
    assert sorted(table["releases"]) == ["0.76.2", "0.79.0"]
    cells = table["releases"]["0.76.2"]["packages"]
    assert cells[f"meshllm/publisher-layers@{catalog['newer']}"] == {
        "verdict": "refused", "codes": ["mesh_llm_version_too_old"]}
    markdown = matrix.with_suffix(".md").read_text()
    assert "| package | mesh-llm 0.76.2 | mesh-llm 0.79.0 |" in markdown
    assert (f"| `meshllm/publisher-layers@{catalog['newer']}` | refused: "
            "`mesh_llm_version_too_old` | loads |") in markdown


def test_a_bad_release_or_matrix_is_a_usage_error(catalog: dict[str, str],
                                                  tmp_path: Path) -> None:
    assert recheck("seventy-six", tmp_path / "m.json")[0] == 2
    bad = tmp_path / "bad.json"
    bad.write_text("[]")
    code, output = recheck("0.76.2", bad)
    assert code == 2 and "not a release matrix" in output


def test_the_service_rechecks_on_its_schedule_and_shows_the_matrix(
        catalog: dict[str, str], rig: ServeRig, hub: FakeHub) -> None:
    import threading

    rig.write_config(watch=["meshllm/*-layers"], catalogs=(CATALOG,), extra=(
        "[recheck]\ninterval_hours = 24\n[[recheck.release]]\nmesh_llm = \"0.76.2\"\n"
        "runtime_abi = \"0.1.53\"\n"))
    with rig.running():
        matrix: dict[str, object] | None = None
        for _ in range(600):
            matrix = rig.status()["release_matrix"]
            if matrix:
                break
            threading.Event().wait(0.1)
        page = httpx_get(f"{rig.url}/status")
    assert matrix is not None
    releases = matrix["releases"]
    assert isinstance(releases, dict) and releases["0.76.2"]["runtime_abi"] == "0.1.53"
    assert bot_discussions(hub, "meshllm/publisher-layers") == [TITLE]
    assert "<h2>Release matrix</h2>" in page and "refused: mesh_llm_version_too_old" in page


def httpx_get(url: str) -> str:
    import httpx

    return httpx.get(url, timeout=10).text
