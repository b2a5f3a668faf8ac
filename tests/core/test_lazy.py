"""meshcert.core.lazy: a package face whose names load on first use. The faces that use it
(meshcert.evidence, meshcert.certify.chat_template, meshcert.cli) export exactly their
`__all__`, each name the very object its submodule defines."""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

import pytest

LAZY_FACES = ("meshcert.evidence", "meshcert.certify.chat_template", "meshcert.cli")


def type_checking_imports(face: str) -> dict[str, str]:
    """name -> module of the face's `if TYPE_CHECKING:` imports (what type checkers see)."""
    source = Path(importlib.import_module(face).__file__ or "").read_text(encoding="utf-8")
    block = next(node for node in ast.parse(source).body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    return {alias.name: str(node.module) for node in block.body
            if isinstance(node, ast.ImportFrom) for alias in node.names}


@pytest.mark.parametrize("face", LAZY_FACES)
def test_every_exported_name_is_its_submodule_s_object(face: str) -> None:
    """`__all__`, the names type checkers see and the names that load are one list."""
    package = importlib.import_module(face)
    typed = type_checking_imports(face)
    assert sorted(typed) == sorted(package.__all__)
    for name, module in typed.items():
        assert getattr(package, name) is getattr(importlib.import_module(module), name), name


def test_a_name_loads_its_submodule_once_and_stays_on_the_package(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "lazyface_example"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(
        "from meshcert.core.lazy import lazy_exports\n"
        "__getattr__ = lazy_exports(__name__, {'heavy': ('ANSWER', 'ask')})\n"
        "__all__ = ['ANSWER', 'ask']\n")
    (pkg / "heavy.py").write_text("ANSWER = 42\n\ndef ask() -> int:\n    return ANSWER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    package = importlib.import_module("lazyface_example")
    try:
        assert "lazyface_example.heavy" not in sys.modules
        assert package.ANSWER == 42
        assert "lazyface_example.heavy" in sys.modules
        assert "ANSWER" in vars(package)  # kept: the next lookup is a plain attribute
        assert package.ask() == 42
        with pytest.raises(AttributeError, match="'lazyface_example' has no attribute 'nope'"):
            _ = package.nope
    finally:
        for name in ("lazyface_example", "lazyface_example.heavy"):
            sys.modules.pop(name, None)
