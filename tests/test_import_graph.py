"""The import graph stays clean: parts only import downward, and no module imports itself
back through a circle, inside a part as much as across parts.

Every import statement counts, at module level and inside functions alike (a function-level
import is still a dependency, it only runs later). Imports under `if TYPE_CHECKING:` never run
and are left out. This test, rather than import-linter's contracts alone, because it also
finds circles between modules of one part (import-linter's layers contract only orders parts)
and needs nothing but the standard library; pyproject.toml's [tool.importlinter] states the
same layers for `lint-imports`, and tests/test_import_contracts.py runs it.

The parts, lowest first (docs/architecture.md): the core (GGUF reader, Hub client, hashing,
codes and findings), the certifier, catalog certification, the writer, the synthetic test
models, evidence, reports, publishing, HF Jobs, attestation, the demo, the CLI and the package
root. A
part may import its own part and the parts below it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("meshcert.core", "meshcert.certify", "meshcert.catalog", "meshcert.writer",
          "meshcert.testing", "meshcert.evidence", "meshcert.reports", "meshcert.publish",
          "meshcert.hubjobs", "meshcert.attest", "meshcert.demo", "meshcert.serve", "meshcert.cli",
          "meshcert")


def layer_of(module: str) -> str:
    """The part a module belongs to: the longest part name it starts with."""
    return max((layer for layer in LAYERS if module == layer or module.startswith(layer + ".")),
               key=len)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted((ROOT / "meshcert").rglob("*.py"))}


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, skipping the bodies of `if TYPE_CHECKING:` blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules `name` imports (`from pkg import mod` counts as `pkg.mod`)."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in _import_nodes(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                       for alias in node.names]
        found.update(t for t in targets if t.split(".")[0] == "meshcert")
    found.discard(name)
    return found


def import_graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imports_of(name, path, modules) for name, path in modules.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = []
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        work.append((root, iter(sorted(graph.get(root, ())))))
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    rank = {layer: i for i, layer in enumerate(LAYERS)}
    return sorted(f"{src} imports {dst}" for src, targets in graph.items() for dst in targets
                  if rank[layer_of(dst)] > rank[layer_of(src)])


def test_the_graph_sees_function_level_imports() -> None:
    graph = import_graph()
    # meshcert.certify.service imports the hub loader inside load_view(), never at module level
    assert "meshcert.certify.sources.hub" in graph["meshcert.certify.service"]
    assert "meshcert.certify.engine" in graph["meshcert.certify.service"]


def test_no_import_circles() -> None:
    assert circles(import_graph()) == []


def test_core_never_imports_upward() -> None:
    assert upward_imports(import_graph()) == []


def test_a_circle_and_an_upward_import_are_caught() -> None:
    graph = {"meshcert.certify.a": {"meshcert.certify.b"},
             "meshcert.certify.b": {"meshcert.certify.c"},
             "meshcert.certify.c": {"meshcert.certify.a"},
             "meshcert.reports.x": {"meshcert.cli"}, "meshcert.cli": set(),
             "meshcert.core.y": {"meshcert.certify.a"}}
    assert circles(graph) == [["meshcert.certify.a", "meshcert.certify.b", "meshcert.certify.c"]]
    assert upward_imports(graph) == ["meshcert.core.y imports meshcert.certify.a",
                                     "meshcert.reports.x imports meshcert.cli"]
