"""pyproject.toml's [tool.importlinter] contracts hold, and state the layers this repository's
own import-graph test states.

`lint-imports` is how a contributor checks the layering from a shell (and how an editor or CI
step can); tests/test_import_graph.py is the stricter check (it also finds circles between the
modules of one part) and needs only the standard library. Both exist, so both must say the same
thing: the contract's layers, top to bottom, are test_import_graph.LAYERS, lowest first, read
backwards, without the package root.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.test_import_graph import LAYERS

ROOT = Path(__file__).resolve().parent.parent
# the `lint-imports` console script's entry point, run by this interpreter (so the import-linter
# and the meshcert it sees are the test's own, whatever is first on PATH)
LINT_IMPORTS = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def importlinter_config() -> dict[str, Any]:
    with (ROOT / "pyproject.toml").open("rb") as file:
        config: dict[str, Any] = tomllib.load(file)["tool"]["importlinter"]
    return config


def layers_contract() -> dict[str, Any]:
    (contract,) = [c for c in importlinter_config()["contracts"] if c["type"] == "layers"]
    return contract


def lint_imports(*config_files: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` from the repository root; --no-cache keeps it from writing a cache dir
    into the checkout."""
    return subprocess.run([sys.executable, "-c", LINT_IMPORTS, "--no-cache", "--no-logo",
                           *map(str, config_files)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)


def test_lint_imports_keeps_every_contract() -> None:
    done = lint_imports()
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    kept = len(importlinter_config()["contracts"])
    assert f"Contracts: {kept} kept, 0 broken." in output, output


def test_the_contract_layers_are_the_import_graph_layers_reversed() -> None:
    contract = layers_contract()
    assert contract["containers"] == ["meshcert"]
    assert ["meshcert." + layer for layer in contract["layers"]] == [
        layer for layer in reversed(LAYERS) if layer != "meshcert"]


def test_the_contract_covers_every_part_of_the_package() -> None:
    contract = layers_contract()
    # exhaustive: lint-imports fails on a child of meshcert that is neither a layer nor ignored
    assert contract["exhaustive"] is True
    assert importlinter_config()["exclude_type_checking_imports"] is True
    children = {path.stem for path in (ROOT / "meshcert").iterdir()
                if (path.suffix == ".py" and path.stem != "__init__")
                or (path / "__init__.py").is_file()}
    # the entry point and the templates' package-data package are the only non-layers
    assert set(contract["exhaustive_ignores"]) == {"__main__", "templates"}
    assert children == set(contract["layers"]) | {"__main__", "templates"}
    assert "hubjobs" in contract["layers"]


def test_lint_imports_reports_an_upward_import(tmp_path: Path) -> None:
    # the same package under an order that puts the core above the CLI: every CLI module
    # imports the core, so the contract must break and name the pair
    upside_down = tmp_path / "upside-down.toml"
    upside_down.write_text('[tool.importlinter]\nroot_package = "meshcert"\n\n'
                           '[[tool.importlinter.contracts]]\nname = "core above cli"\n'
                           'type = "layers"\ncontainers = ["meshcert"]\n'
                           'layers = ["core", "cli"]\n', encoding="utf-8")
    done = lint_imports(upside_down)
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "Contracts: 0 kept, 1 broken." in output
    assert "meshcert.cli is not allowed to import meshcert.core" in output
