"""The contributor's guides, checked against the code they describe: docs/architecture.md (the
layout of the parts, and where a newcomer adds a check, a source, a report format, an evidence
format, an option rule, an error) and docs/development.md. Every file, folder, module and name
they send a reader to exists: a path names a file; `file.py::name`, "`name` in `file.py`"
and `meshcert.module.name` name something defined there; a short path (`gguf/reader.py`) is
found beside a full path of the same paragraph, bullet or table row; a class or function the
guides name in backticks is defined in meshcert, its scripts or the library named below."""

from __future__ import annotations

import ast
import builtins
import importlib
import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ["docs/architecture.md", "docs/development.md"]
# the format the report-format guide adds ("To add a format `x`"), which does not exist
PLACEHOLDER = "x"
# what the guides name from a library meshcert uses: name -> the module that defines it
ELSEWHERE = {"HfApi": "huggingface_hub", "ImmutableSandboxedEnvironment": "jinja2.sandbox"}
CODE_TREES = ("meshcert", "scripts", "bench")

_TOP = r"(?:meshcert|tests|scripts|bench)/"
FILE = re.compile(rf"(?<![\w/.<>-])({_TOP}[\w/.-]*?\.py)(?:::([A-Za-z_][\w.]*))?")
FOLDER = re.compile(rf"`({_TOP}[\w/]*/)`")
NAME_IN = re.compile(rf"`([A-Za-z_]\w*)(?:\([^`]*\))?` in `({_TOP}[\w/.]*)`")
DOTTED = re.compile(r"(?<![\w./-])meshcert(?:\.[A-Za-z_]\w*)+")
SHORT = re.compile(r"`([\w/]+\.py)(?:::\w+)?`")
CLASS = re.compile(r"`([A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+)`")
CALL = re.compile(r"`([a-z_][a-z0-9_]*)\(")


def _text(guide: str) -> str:
    # a path wrapped at a slash ("`meshcert/certify/\n    view.py`") is one path
    return re.sub(r"/\n\s*", "/", (ROOT / guide).read_text(encoding="utf-8"))


def _blocks(text: str) -> list[str]:
    """Paragraphs, bullets, numbered steps and table rows, each one block."""
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        if not line.strip() or re.match(r"\s*(?:- |\||#|\d+\. )", line):
            blocks.append([])
        blocks[-1].append(line)
    return ["\n".join(b) for b in blocks if any(line.strip() for line in b)]


@cache
def _bindings(path: Path) -> frozenset[str]:
    """The names a module binds at its top level, and `Class.member` for its classes."""
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
            if isinstance(node, ast.ClassDef):
                for member in node.body:
                    if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                        names.add(f"{node.name}.{member.name}")
                    elif isinstance(member, ast.AnnAssign | ast.Assign):
                        names.update(f"{node.name}.{t.id}" for t in _targets(member))
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            names.update(t.id for t in _targets(node))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return frozenset(names)


def _targets(node: ast.Assign | ast.AnnAssign) -> list[ast.Name]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return [t for t in targets if isinstance(t, ast.Name)]


def _module_file(dotted: str) -> Path | None:
    base = ROOT.joinpath(*dotted.split("."))
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def _defines(path: Path, name: str) -> bool:
    if name in _bindings(path):
        return True
    if path.is_relative_to(ROOT / "meshcert"):  # a lazy export (meshcert.core.lazy)
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        return hasattr(importlib.import_module(module), name)
    return False


@cache
def _defined_anywhere() -> frozenset[str]:
    names: set[str] = set()
    for tree in CODE_TREES:
        for path in (ROOT / tree).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    names.add(node.name)
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    names.update(t.id for t in _targets(node))
    return frozenset(names)


@pytest.mark.parametrize("guide", GUIDES)
def test_every_file_and_folder_a_guide_names_exists(guide: str) -> None:
    text = _text(guide)
    paths = [m.group(1) for m in FILE.finditer(text)] + FOLDER.findall(text)
    assert len(paths) > 5, "the guide names files"
    missing = [p for p in paths if not (ROOT / p).exists()]
    assert not missing, missing


@pytest.mark.parametrize("guide", GUIDES)
def test_every_name_a_guide_places_in_a_module_is_defined_there(guide: str) -> None:
    text = _text(guide)
    wrong = []
    for m in FILE.finditer(text):
        if m.group(2) and not _defines(ROOT / m.group(1), m.group(2)):
            wrong.append(f"{m.group(1)}::{m.group(2)}")
    for name, where in NAME_IN.findall(text):
        place = ROOT / where
        modules = sorted(place.rglob("*.py")) if place.is_dir() else [place]
        if not any(p.is_file() and _defines(p, name) for p in modules):
            wrong.append(f"{name} in {where}")
    assert not wrong, wrong


@pytest.mark.parametrize("guide", GUIDES)
def test_every_dotted_module_and_name_a_guide_names_exists(guide: str) -> None:
    wrong = []
    for dotted in DOTTED.findall(_text(guide)):
        parts = dotted.split(".")
        if PLACEHOLDER in parts:
            continue
        cut = next((i for i in range(len(parts), 0, -1)
                    if _module_file(".".join(parts[:i])) is not None), 0)
        path = _module_file(".".join(parts[:cut]))
        rest = ".".join(parts[cut:])
        if path is None or (rest and not _defines(path, rest)):
            wrong.append(dotted)
    assert not wrong, wrong


@pytest.mark.parametrize("guide", GUIDES)
def test_every_short_path_is_beside_a_full_path_of_its_block(guide: str) -> None:
    lost = []
    for block in _blocks(_text(guide)):
        near = {ROOT / m.group(1) for m in FILE.finditer(block)} | {
            ROOT / f for f in FOLDER.findall(block)}
        bases = {base for p in near for base in [p if p.is_dir() else p.parent, *p.parents]
                 if base != ROOT and base.is_relative_to(ROOT)}
        for short in SHORT.findall(block):
            if short.startswith(tuple(t + "/" for t in (*CODE_TREES, "tests"))):
                continue
            if not any((base / short).is_file() for base in bases):
                lost.append(f"{short} in: {block.strip()[:70]}...")
    assert not lost, lost


@pytest.mark.parametrize("guide", GUIDES)
def test_every_class_and_function_a_guide_names_is_defined(guide: str) -> None:
    text = _text(guide)
    named = set(CLASS.findall(text)) | set(CALL.findall(text))
    unknown = []
    for name in sorted(named):
        if name in _defined_anywhere() or hasattr(builtins, name):
            continue
        home = ELSEWHERE.get(name)
        if home is None or not hasattr(importlib.import_module(home), name):
            unknown.append(name)
    assert not unknown, unknown
