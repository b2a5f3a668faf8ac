"""The exit statuses of every meshcert command, each defined here once (docs/certify.md,
evidence.md, publishing.md, writing.md): `Exit.<NAME>`.

A status is a number with the name of what it means (`ExitStatus`, an int: `typer.Exit` and
`sys.exit` take it as it is). Some numbers mean more than one thing; each meaning has its own
name instead of being an alias of another's (in an enum it would be: the status 2 of a refusal
or of a failed Phase E gate would print as `USAGE`, and `Exit(2)` could only find that one).
There is no lookup by number: a command says which ending it means. The documented numbers:

- 0 `PASSED`;
- 1 `FAILED`, and `HISTORY_REGRESSED` (`evidence history --gate`: a setup regressed);
- 2 `USAGE` (typer's own status for a usage error), `REFUSED` (refused before anything is
  spent, written or uploaded) and `PHASE_E_GATE_FAILED` (an enforced Phase E gate failed, a
  `--package` rule broke or a setting is bad: the script's status);
- 3 `INCOMPLETE` (no verdict: the work could not finish);
- 130 `INTERRUPTED` (Ctrl-C, after writing what was recorded).

This sits in `core` so that an error's kind can name its status (meshcert.core.errors); the
CLI imports the same objects from meshcert.cli.exit_codes.
"""

from __future__ import annotations

from typing import Final


class ExitStatus(int):
    """An exit status: the number a command ends with, and the name of what it means."""

    name: str

    def __new__(cls, number: int, name: str) -> ExitStatus:
        status = super().__new__(cls, number)
        status.name = name
        return status

    def __repr__(self) -> str:
        return f"<Exit.{self.name}: {int(self)}>"

    __str__ = int.__repr__  # printed as its number, as an int is


class Exit:
    """Every documented exit status, by what it means."""

    PASSED: Final = ExitStatus(0, "PASSED")
    FAILED: Final = ExitStatus(1, "FAILED")
    HISTORY_REGRESSED: Final = ExitStatus(1, "HISTORY_REGRESSED")
    USAGE: Final = ExitStatus(2, "USAGE")
    REFUSED: Final = ExitStatus(2, "REFUSED")
    PHASE_E_GATE_FAILED: Final = ExitStatus(2, "PHASE_E_GATE_FAILED")
    INCOMPLETE: Final = ExitStatus(3, "INCOMPLETE")
    INTERRUPTED: Final = ExitStatus(130, "INTERRUPTED")


ALL: Final[tuple[ExitStatus, ...]] = tuple(
    value for value in vars(Exit).values() if isinstance(value, ExitStatus))
