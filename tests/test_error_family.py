"""Every exception class meshcert defines derives from meshcert.core.errors.MeshcertError, so
the CLI can end any of them by its kind (docs/architecture.md, "Errors")."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import meshcert
from meshcert.core.errors import MeshcertError

ROOT = Path(meshcert.__file__).parent
# a base whose name says it is an exception (stdlib, jinja2, httpx or meshcert's own)
EXCEPTION_BASE = re.compile(r"(Error|Exception|Refused|Refusal|Retrying|Interrupt|Interrupted|"
                            r"Failure|Exit)$")


# Not errors: a signal's unwinding, a BaseException like KeyboardInterrupt so that no
# `except Exception` on its way (a check's crash handler) swallows it. It never leaves the
# process it is raised in (a serve certification worker, which exits 143), so no command ends
# with it.
SIGNALS = {"meshcert.serve.stopping.Terminated"}


def _base_name(base: ast.expr) -> str:
    if isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def _exception_classes() -> list[tuple[str, str]]:
    found = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts)
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.ClassDef) and any(
                    EXCEPTION_BASE.search(_base_name(b)) for b in node.bases):
                found.append((module, node.name))
    return found


def test_every_exception_class_is_a_meshcert_error() -> None:
    classes = _exception_classes()
    assert len(classes) >= 40  # the scan finds them (46 when the family was made)
    outside = []
    for module, name in classes:
        cls = getattr(importlib.import_module(module), name)
        if f"{module}.{name}" in SIGNALS:
            assert issubclass(cls, BaseException) and not issubclass(cls, Exception)
        elif issubclass(cls, BaseException) and not issubclass(cls, MeshcertError):
            outside.append(f"{module}.{name}")
    assert outside == []
