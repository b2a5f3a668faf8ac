"""Every command exits with a named status of meshcert.cli.exit_codes.Exit (defined once, in
meshcert.core.exit_status), never a bare integer, and the names keep the documented numbers."""

from __future__ import annotations

import ast
from pathlib import Path

import meshcert
import meshcert.cli
from meshcert.cli.exit_codes import EXIT_CODES, Exit
from meshcert.core.exit_status import ALL

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
    # evidence.md: an enforced Phase E gate failure exits 2; `evidence history --gate` exits 1;
    # publishing.md: a refusal before any work exits 2.
    assert {status.name: int(status) for status in ALL} == {
        "PASSED": 0, "FAILED": 1, "HISTORY_REGRESSED": 1, "USAGE": 2, "REFUSED": 2,
        "PHASE_E_GATE_FAILED": 2, "INCOMPLETE": 3, "INTERRUPTED": 130}
    assert EXIT_CODES == {"passed": 0, "failed": 1, "incomplete": 3}


def test_a_meaning_that_shares_a_number_keeps_its_own_name() -> None:
    assert Exit.REFUSED == Exit.USAGE == Exit.PHASE_E_GATE_FAILED == 2
    assert [Exit.REFUSED.name, Exit.PHASE_E_GATE_FAILED.name, Exit.HISTORY_REGRESSED.name] == [
        "REFUSED", "PHASE_E_GATE_FAILED", "HISTORY_REGRESSED"]
    assert repr(Exit.PHASE_E_GATE_FAILED) == "<Exit.PHASE_E_GATE_FAILED: 2>"
    assert (str(Exit.REFUSED), f"{Exit.INTERRUPTED}") == ("2", "130")  # printed as numbers


def test_every_error_kind_exits_with_its_named_status() -> None:
    from meshcert.core.errors import ErrorKind

    assert {kind: kind.exit_status.name for kind in ErrorKind} == {
        ErrorKind.USAGE: "USAGE", ErrorKind.REFUSAL: "REFUSED", ErrorKind.FAILURE: "FAILED",
        ErrorKind.INCOMPLETE: "INCOMPLETE", ErrorKind.INTERRUPTED: "INTERRUPTED"}


def test_the_numbers_are_written_once() -> None:
    """Only meshcert.core.exit_status makes an ExitStatus: everything else names one."""
    made = []
    for path in sorted(Path(meshcert.__file__).parent.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Call) and _called_name(node) == "ExitStatus":
                made.append(path.name)
    assert set(made) == {"exit_status.py"}
