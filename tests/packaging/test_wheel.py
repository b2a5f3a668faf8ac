"""The wheel a user gets: built from the checkout, installed (not editable) into a fresh venv.

- the wheel's only top-level package is `meshcert`, with its templates and data as package
  data, even when the source tree holds what an old checkout or a demo run leaves behind
  (top-level `certify/`, `evidence/`, `reports/`, `templates/`, `meshcert-demo/`);
- installed into a fresh virtual environment (dependencies from the registry, as a user's
  `pip install` gets them) it answers `meshcert --version` and runs `meshcert demo` from an
  empty directory;
- next to PyPI's `evidence`, `reports` and `templates` distributions (whose top-level names
  meshcert once took) both sides import and run.

Slow: a wheel build and a venv with meshcert's dependencies (pip's cache makes repeats quick).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import meshcert

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]

REPO = Path(__file__).resolve().parents[2]
# what a stale tree can hold at its root; none of it may reach the wheel
DECOYS = ("certify", "evidence", "reports", "templates", "meshcert-demo")
# PyPI distributions whose import names meshcert used to install at the top level
NEIGHBOURS = ("evidence", "reports", "templates")


def _run(argv: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(argv, cwd=cwd, env=clean | {"PIP_DISABLE_PIP_VERSION_CHECK": "1"} | env,
                          capture_output=True, text=True, check=False)
    assert done.returncode == 0, f"$ {' '.join(argv)}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from a copy of the checkout's sources, decoys beside them."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(REPO / name, source / name)
    shutil.copytree(REPO / "meshcert", source / "meshcert",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in DECOYS:
        (source / name).mkdir()
        (source / name / "__init__.py").write_text("")
    (source / "meshcert-demo" / "cert.json").write_text("{}")
    out = tmp_path_factory.mktemp("wheel")
    # build isolation: the build backend pyproject.toml names, from the registry (the
    # interpreter's own setuptools may be too old to build a wheel)
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(out), str(source)],
         cwd=out)
    (built,) = out.glob("meshcert-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the wheel installed, dependencies from the registry."""
    root = tmp_path_factory.mktemp("venv") / "env"
    _run([sys.executable, "-m", "venv", str(root)], cwd=root.parent)
    _run([str(root / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
         cwd=root.parent)
    return root


def test_the_wheel_holds_meshcert_alone_with_its_templates_and_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    info = f"meshcert-{meshcert.__version__}.dist-info"
    assert zipfile.ZipFile(wheel).read(f"{info}/top_level.txt").decode().split() == ["meshcert"]
    assert {name.split("/")[0] for name in names} == {"meshcert", info}
    record = zipfile.ZipFile(wheel).read(f"{info}/RECORD").decode().splitlines()
    assert {line.split("/")[0] for line in record} == {"meshcert", info}
    templates = {Path(n).name for n in names if n.startswith("meshcert/templates/")}
    assert {"base.html.j2", "_macros.html.j2", "cert.html.j2", "evidence.html.j2",
            "catalog.html.j2", "report.css"} <= templates
    assert "meshcert/certify/data/split-certified.json" in names
    # every data file of the source tree ships (the evidence samples the demo reads among them)
    data = {str(p.relative_to(REPO)) for p in (REPO / "meshcert" / "evidence" / "data").rglob("*")
            if p.is_file()}
    assert data and data <= set(names)
    assert not any("meshcert-demo" in n for n in names)


def test_installed_it_answers_version_and_runs_the_demo_from_an_empty_directory(
        venv: Path, tmp_path: Path) -> None:
    here = tmp_path / "empty"
    here.mkdir()
    version = _run([str(venv / "bin" / "meshcert"), "--version"], cwd=here)
    assert version.stdout.strip() == f"meshcert {meshcert.__version__}"
    demo = _run([str(venv / "bin" / "meshcert"), "demo"], cwd=here)
    assert "certification passed" in demo.stdout
    report = json.loads((here / "meshcert-demo" / "cert.json").read_text())
    assert report["status"] == "passed"
    assert (here / "meshcert-demo" / "cert.html").is_file()
    assert (here / "meshcert-demo" / "evidence" / "evidence.html").is_file()
    # the installed copy ran, not this checkout
    where = _run([str(venv / "bin" / "python"), "-c", "import meshcert; print(meshcert.__file__)"],
                 cwd=here)
    assert Path(where.stdout.strip()).is_relative_to(venv)


def test_it_lives_beside_pypis_evidence_reports_and_templates(
        venv: Path, tmp_path: Path) -> None:
    python = str(venv / "bin" / "python")
    _run([python, "-m", "pip", "install", "-q", *NEIGHBOURS], cwd=tmp_path)
    probe = ("import json, evidence, reports, templates, meshcert.evidence, meshcert.reports, "
             "meshcert.templates\n"
             "print(json.dumps({m.__name__: m.__file__ for m in (evidence, reports, templates, "
             "meshcert.evidence, meshcert.reports, meshcert.templates)}))")
    files = {name: Path(path) for name, path in json.loads(
        _run([python, "-c", probe], cwd=tmp_path).stdout).items()}
    site_packages = files["meshcert.evidence"].parents[2]
    for name in NEIGHBOURS:
        assert files[name] == site_packages / name / "__init__.py"  # theirs, untouched
        assert files[f"meshcert.{name}"] == site_packages / "meshcert" / name / "__init__.py"
    demo = _run([str(venv / "bin" / "meshcert"), "demo"], cwd=tmp_path)
    assert "certification passed" in demo.stdout
