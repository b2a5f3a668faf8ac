"""The layout rule of meshcert/reports/registry.py, held: the renderer of report kind K in
format F is a function of `meshcert/reports/<K>/<F>.py`, every registry row and every
`render_` function under meshcert/reports/ alike."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from meshcert.reports.registry import KINDS, REPORT_FORMATS, Renderer

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "meshcert" / "reports"

# The file of each format, by the format's name but these (one Markdown document per report)
FILE_OF_FORMAT = {"md": "markdown", "summary": "markdown"}
# The modules of meshcert/reports/ whose `render_` functions render no report of a kind:
# the model's own JSON, and the HTML page every kind's html.py fills
NOT_RENDERERS = {"registry.py": {"render_json"}, "htmlpage.py": {"render_page"}}

ROWS = [(fmt, kind, found) for fmt, kinds in REPORT_FORMATS.items()
        for kind, found in kinds.items()]


def _path_of(module: str) -> Path:
    return ROOT.joinpath(*module.split(".")).with_suffix(".py")


@pytest.mark.parametrize(("fmt", "kind", "found"), ROWS,
                         ids=[f"{fmt}-{kind}" for fmt, kind, _ in ROWS])
def test_every_registry_row_is_at_reports_kind_format(fmt: str, kind: str,
                                                      found: Renderer) -> None:
    module, function = found.target.split(":")
    if fmt == "json":
        assert found.target == "meshcert.reports.registry:render_json"
        return
    file = FILE_OF_FORMAT.get(fmt, fmt)
    assert module == f"meshcert.reports.{kind}.{file}", found.target
    path = _path_of(module)
    assert path == REPORTS / kind / f"{file}.py"
    defined = {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
               if isinstance(node, ast.FunctionDef)}
    assert function in defined, f"{function} is not defined in {path.relative_to(ROOT)}"


def test_every_kind_has_its_folder_and_every_folder_is_a_kind() -> None:
    folders = {p.name for p in REPORTS.iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(KINDS.values())


def test_every_render_function_under_reports_is_in_its_kind_and_format_file() -> None:
    kinds = set(KINDS.values())
    files = {FILE_OF_FORMAT.get(fmt, fmt) for fmt in REPORT_FORMATS if fmt != "json"}
    misplaced = []
    seen = set()
    for path in sorted(REPORTS.rglob("*.py")):
        rel = path.relative_to(REPORTS)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not (isinstance(node, ast.FunctionDef) and node.name.startswith("render_")):
                continue
            seen.add(node.name)
            if node.name in NOT_RENDERERS.get(str(rel), set()):
                continue
            in_place = len(rel.parts) == 2 and rel.parts[0] in kinds and path.stem in files
            if not in_place:
                misplaced.append(f"meshcert/reports/{rel}::{node.name}")
    registered = {found.target.split(":")[1] for _, _, found in ROWS}
    assert registered <= seen, "the walk finds every registered renderer"
    assert not misplaced, misplaced
