"""Every third-party package meshcert imports is one pyproject.toml declares.

A package that arrives only as another's dependency (httpcore through httpx, markupsafe through
jinja2) works until that other package drops or renames it, and then `pip install meshcert`
gives a meshcert that fails at import. So the rule, for every import statement under meshcert/
(module level and inside functions; `if TYPE_CHECKING:` bodies never run and are left out):

- a module imported by meshcert must come from a distribution in [project] `dependencies`;
- unless it is one of OPTIONAL_MODULES, imported only on a guarded path (the module importing it
  catches the ImportError and says which extra to install): then its distribution must be in
  that extra instead, and every module that imports it must hold such a guard.

The test suite, the scripts and the benchmarks are run from a checkout installed with
`pip install -e '.[test]'` (and `.[live]` for the live tests and the llama.cpp scripts), so what
they import must be in `dependencies`, the `test` extra or the `live` extra.

A module that no installed distribution provides fails, never skips: it cannot be mapped to a
distribution, so it cannot be shown to be declared (OPTIONAL_MODULES name their distribution,
so their extras need not be installed). Standard-library modules
(sys.stdlib_module_names) and the repository's own (meshcert, tests, bench, scripts, and a
script's neighbours in a directory that is not a package) are not third-party.
"""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from collections.abc import Iterable
from pathlib import Path

from tests.test_import_graph import _import_nodes

ROOT = Path(__file__).resolve().parents[2]
FIRST_PARTY = frozenset({"meshcert", "tests", "bench", "scripts"})
# module -> (extra, distribution): imported by meshcert only behind an ImportError guard
OPTIONAL_MODULES = {
    "sigstore": ("sigstore", "sigstore"),  # meshcert.attest.sigstore_backend: keyless signing
    "llama_cpp": ("live", "llama-cpp-python"),  # meshcert.certify.workers: the decode worker
}
# module -> (extra, distribution): imported without a guard inside one optional part of meshcert,
# whose way in (the module importing it) is guarded where the rest of meshcert imports it
OPTIONAL_PART_MODULES = {
    "starlette": ("serve", "starlette"),  # meshcert.serve.app: the webhook service's ASGI app
    "uvicorn": ("serve", "uvicorn"),  # meshcert.cli.serve_cmd: the server it runs under
}
OPTIONAL_PARTS = {"serve": "meshcert/serve/"}  # extra -> the part only it makes importable
SUPPORT_EXTRAS = ("test", "live", "serve")  # scripts/test.sh installs all three
SUPPORT_DIRS = ("tests", "scripts", "bench")


def normalized(name: str) -> str:
    """A distribution name as PEP 503 compares it: case and runs of -_. do not matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """The distribution a PEP 508 requirement names ("llama-cpp-python[server]==0.3.36")."""
    found = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    assert found, f"unreadable requirement {requirement!r} in pyproject.toml"
    return normalized(found.group(1))


class Declared:
    """The normalized distribution names pyproject.toml declares: `dependencies` and each extra."""

    def __init__(self, pyproject: Path) -> None:
        with pyproject.open("rb") as file:
            project = tomllib.load(file)["project"]
        self.dependencies = {requirement_name(r) for r in project.get("dependencies", [])}
        self.extras = {extra: {requirement_name(r) for r in requirements}
                       for extra, requirements in project.get("optional-dependencies", {}).items()}

    def with_extras(self, extras: Iterable[str]) -> set[str]:
        return self.dependencies.union(*(self.extras[extra] for extra in extras))


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(k, ast.Name) and k.id in ("ImportError", "ModuleNotFoundError")
               for k in kinds)


def _top_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        return [] if node.level or not node.module else [node.module.split(".")[0]]
    return [alias.name.split(".")[0] for alias in node.names]


def guarded_imports(tree: ast.AST) -> set[str]:
    """Top-level names imported inside a `try:` whose handlers catch ImportError."""
    guarded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(map(_catches_import_error, node.handlers)):
            for statement in node.body:
                for inner in _import_nodes(statement):
                    guarded.update(_top_names(inner))
    return guarded


def _neighbours(path: Path) -> set[str]:
    """What a script imports from its own directory (on sys.path when it runs), if that
    directory is not a package."""
    if (path.parent / "__init__.py").exists():
        return set()
    return {p.stem for p in path.parent.iterdir()
            if p.suffix == ".py" or (p / "__init__.py").is_file()}


class Imports:
    """The third-party modules the .py files under some directories import: where each is
    imported, and which files import it inside an ImportError guard."""

    def __init__(self, root: Path, directories: Iterable[str], *,
                 first_party_modules: bool = False) -> None:
        """With `first_party_modules`, meshcert's own modules are recorded too, by their whole
        dotted name (`meshcert.serve.app`), beside the third-party top-level names."""
        self.places: dict[str, list[str]] = {}
        self.files: dict[str, set[str]] = {}
        self.guarded_in: dict[str, set[str]] = {}
        self._first_party = first_party_modules
        for directory in directories:
            for path in sorted((root / directory).rglob("*.py")):
                self._read(path, path.relative_to(root).as_posix())

    def _read(self, path: Path, shown: str) -> None:
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        own = FIRST_PARTY | _neighbours(path)
        guarded = guarded_imports(tree)
        for node in _import_nodes(tree):
            for name in _top_names(node):
                if name in sys.stdlib_module_names or name in own:
                    continue
                self._record(name, shown, node.lineno, name in guarded)
        if self._first_party:
            guarded_whole = guarded_modules(tree)
            for node in _import_nodes(tree):
                for name in _whole_names(node):
                    if name.split(".")[0] == "meshcert":
                        self._record(name, shown, node.lineno, name in guarded_whole)

    def _record(self, name: str, shown: str, line: int, guarded: bool) -> None:
        self.places.setdefault(name, []).append(f"{shown}:{line}")
        self.files.setdefault(name, set()).add(shown)
        if guarded:
            self.guarded_in.setdefault(name, set()).add(shown)


def _whole_names(node: ast.Import | ast.ImportFrom) -> list[str]:
    """`from a.b import c` -> a.b and a.b.c (c may be a module); `import a.b` -> a.b."""
    if isinstance(node, ast.ImportFrom):
        if node.level or not node.module:
            return []
        return [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
    return [alias.name for alias in node.names]


def guarded_modules(tree: ast.AST) -> set[str]:
    """Whole module names imported inside a `try:` whose handlers catch ImportError."""
    guarded: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and any(map(_catches_import_error, node.handlers)):
            for statement in node.body:
                for inner in _import_nodes(statement):
                    guarded.update(_whole_names(inner))
    return guarded


def undeclared(imports: Imports, allowed: set[str], allowed_as: str, declared: Declared,
               optional: dict[str, tuple[str, str]], *, guards: bool) -> list[str]:
    """One line per imported module its allowed distributions do not cover. `optional` modules
    must be in their extra instead (and, with `guards`, guarded in every file importing them)."""
    installed = importlib.metadata.packages_distributions()
    problems: list[str] = []
    for module, places in sorted(imports.places.items()):
        first = places[0] + (f" (and {len(places) - 1} more)" if len(places) > 1 else "")
        if module in optional:
            extra, distribution = optional[module]
            if normalized(distribution) not in declared.extras.get(extra, set()):
                problems.append(f"{first} imports optional {module}: its distribution "
                                f"{distribution} is not in the {extra!r} extra")
            unguarded = imports.files[module] - imports.guarded_in.get(module, set())
            if guards:
                problems += [f"{file} imports optional {module} (the {extra!r} extra) with no "
                             "ImportError guard" for file in sorted(unguarded)]
            continue
        distributions = installed.get(module)
        if not distributions:
            problems.append(f"{first} imports {module}, which no installed distribution "
                            f"provides: install it and declare it in {allowed_as}")
        elif not {normalized(d) for d in distributions} & allowed:
            problems.append(f"{first} imports {module} (distribution "
                            f"{', '.join(distributions)}), not declared in {allowed_as}")
    return problems


def part_problems(imports: Imports, declared: Declared) -> list[str]:
    """An optional part's modules: in their extra, imported only inside the part (or behind an
    ImportError guard), and every import of the part's module that needs them guarded."""
    problems: list[str] = []
    for module, (extra, distribution) in OPTIONAL_PART_MODULES.items():
        if normalized(distribution) not in declared.extras.get(extra, set()):
            problems.append(f"{module}: its distribution {distribution} is not in the "
                            f"{extra!r} extra")
        part = OPTIONAL_PARTS[extra]
        unguarded = imports.files.get(module, set()) - imports.guarded_in.get(module, set())
        problems += [f"{file} imports {module} (the {extra!r} extra) outside {part} with no "
                     "ImportError guard" for file in sorted(unguarded) if not file.startswith(part)]
        for inside in sorted(f for f in unguarded if f.startswith(part)):
            way_in = inside.removesuffix(".py").replace("/", ".")
            problems += [f"{file} imports {way_in} (needs {module}, the {extra!r} extra) with "
                         "no ImportError guard" for file in sorted(imports.files.get(way_in, set())
                                                                   - imports.guarded_in.get(way_in,
                                                                                            set()))
                         if not file.startswith(part)]
    return problems


def test_every_third_party_import_of_meshcert_is_declared() -> None:
    declared = Declared(ROOT / "pyproject.toml")
    imports = Imports(ROOT, ["meshcert"])
    parts = set(OPTIONAL_PART_MODULES)
    for module in parts:  # checked by part_problems below
        imports.places.pop(module, None)
    problems = undeclared(imports, declared.dependencies, "[project] dependencies", declared,
                          OPTIONAL_MODULES, guards=True)
    assert problems == [], "\n".join(problems)


def test_an_optional_part_is_entered_only_behind_a_guard() -> None:
    """meshcert.serve needs the `serve` extra: `meshcert serve` imports its app in a guard that
    names the extra; nothing else of meshcert imports what needs it."""
    problems = part_problems(Imports(ROOT, ["meshcert"], first_party_modules=True),
                             Declared(ROOT / "pyproject.toml"))
    assert problems == [], "\n".join(problems)


def test_every_third_party_import_of_the_tests_scripts_and_benchmarks_is_declared() -> None:
    declared = Declared(ROOT / "pyproject.toml")
    optional = {m: (extra, d) for m, (extra, d) in OPTIONAL_MODULES.items()
                if extra in SUPPORT_EXTRAS}
    problems = undeclared(Imports(ROOT, SUPPORT_DIRS), declared.with_extras(SUPPORT_EXTRAS),
                          "[project] dependencies or the test/live/serve extras", declared,
                          optional, guards=False)
    assert problems == [], "\n".join(problems)


def test_the_check_names_each_undeclared_missing_and_unguarded_import(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = ["HTTPX>=0.27"]\n'
        '[project.optional-dependencies]\nlive = ["llama_cpp.python[server]==0.3.36"]\n',
        encoding="utf-8")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "a.py").write_text(
        "from __future__ import annotations\n"  # line 1: the standard library
        "import json\n"
        "from typing import TYPE_CHECKING\n"
        "import httpx\n"  # declared (names compare case-blind)
        "from . import b\n"  # relative: the package's own
        "if TYPE_CHECKING:\n"
        "    import pandas  # never runs, so never a dependency\n"
        "def load():\n"
        "    import numpy  # line 9: installed, inside a function, not declared\n"
        "    import no_such_module_for_meshcert_tests\n"
        "try:\n"
        "    import llama_cpp  # optional, guarded, in its extra\n"
        "except ImportError:\n"
        "    llama_cpp = None\n", encoding="utf-8")
    (tmp_path / "pkg" / "b.py").write_text("import sigstore\n", encoding="utf-8")
    optional = {"llama_cpp": ("live", "llama-cpp-python"), "sigstore": ("sigstore", "sigstore")}
    declared = Declared(tmp_path / "pyproject.toml")
    problems = undeclared(Imports(tmp_path, ["pkg"]), declared.dependencies,
                          "[project] dependencies", declared, optional, guards=True)
    assert problems == [
        "pkg/a.py:10 imports no_such_module_for_meshcert_tests, which no installed distribution"
        " provides: install it and declare it in [project] dependencies",
        "pkg/a.py:9 imports numpy (distribution numpy), not declared in [project] dependencies",
        "pkg/b.py:1 imports optional sigstore: its distribution sigstore is not in the "
        "'sigstore' extra",
        "pkg/b.py imports optional sigstore (the 'sigstore' extra) with no ImportError guard",
    ]


def test_the_part_check_names_an_unguarded_way_in(tmp_path: Path) -> None:
    """A module outside the part importing the part's app without a guard is named, and so is
    the extra's module imported outside the part."""
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\ndependencies = []\n'
        '[project.optional-dependencies]\nserve = ["starlette", "uvicorn"]\n', encoding="utf-8")
    serve = tmp_path / "meshcert" / "serve"
    serve.mkdir(parents=True)
    for package in (tmp_path / "meshcert", serve):
        (package / "__init__.py").write_text("")
    (serve / "app.py").write_text("from starlette.applications import Starlette\n")
    (tmp_path / "meshcert" / "cli.py").write_text(
        "from meshcert.serve.app import Starlette\nimport uvicorn\n")
    problems = part_problems(Imports(tmp_path, ["meshcert"], first_party_modules=True),
                             Declared(tmp_path / "pyproject.toml"))
    assert problems == [
        "meshcert/cli.py imports meshcert.serve.app (needs starlette, the 'serve' extra) with "
        "no ImportError guard",
        "meshcert/cli.py imports uvicorn (the 'serve' extra) outside meshcert/serve/ with no "
        "ImportError guard"]
    (tmp_path / "meshcert" / "cli.py").write_text(
        "try:\n    import uvicorn\n\n    from meshcert.serve.app import Starlette\n"
        "except ImportError:\n    uvicorn = None\n")
    assert part_problems(Imports(tmp_path, ["meshcert"], first_party_modules=True),
                         Declared(tmp_path / "pyproject.toml")) == []
