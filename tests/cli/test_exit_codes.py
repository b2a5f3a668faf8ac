"""Every command exits with a named status of meshcert.cli.exit_codes.Exit, never a bare
integer, and the names keep the documented numbers."""

from __future__ import annotations

import ast
from pathlib import Path

import meshcert.cli
from meshcert.cli.exit_codes import EXIT_CODES, Exit

CLI = Path(meshcert.cli.__file__).parent
EXITING_CALLS = {"Exit", "SystemExit", "exit"}


def _called_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def _int_literals(node: ast.AST) -> list[int]:
    return [n.value for n in ast.walk(node)
            if isinstance(n, ast.Constant) and type(n.value) is int]


def test_no_integer_literal_in_an_exit_call() -> None:
    offenders = []
    for path in sorted(CLI.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and _called_name(node) in EXITING_CALLS:
                for arg in node.args:
                    offenders += [f"{path.name}:{node.lineno}: {value}"
                                  for value in _int_literals(arg)]
    assert offenders == []


def test_the_documented_numbers() -> None:
    assert [Exit.PASSED, Exit.FAILED, Exit.USAGE, Exit.INCOMPLETE, Exit.INTERRUPTED] == \
        [0, 1, 2, 3, 130]
    # evidence.md: an enforced Phase E gate failure exits 2; `evidence history --gate` exits 1.
    assert Exit.PHASE_E_GATE_FAILED == 2
    assert Exit.HISTORY_REGRESSED == 1
    assert EXIT_CODES == {"passed": 0, "failed": 1, "incomplete": 3}


def test_every_error_kind_exits_with_its_named_status() -> None:
    # meshcert.core.errors sits below the CLI, so it keeps the numbers itself: they must be
    # the CLI's documented ones.
    from meshcert.core.errors import ErrorKind

    assert {kind: kind.exit_status for kind in ErrorKind} == {
        ErrorKind.USAGE: Exit.USAGE, ErrorKind.REFUSAL: Exit.USAGE,
        ErrorKind.FAILURE: Exit.FAILED, ErrorKind.INCOMPLETE: Exit.INCOMPLETE,
        ErrorKind.INTERRUPTED: Exit.INTERRUPTED}
