"""The exit statuses the CLI ends with: `Exit` is meshcert.core.exit_status's (each status is
defined there once, below the error kinds that name theirs; its docstring lists the numbers and
which meanings share one), and `EXIT_CODES` maps a report's status to its exit status."""

from __future__ import annotations

from meshcert.core.exit_status import Exit, ExitStatus

__all__ = ["EXIT_CODES", "Exit", "ExitStatus"]

# A report's status -> its exit status (certification and catalog reports).
EXIT_CODES: dict[str, ExitStatus] = {"passed": Exit.PASSED, "failed": Exit.FAILED,
                                     "incomplete": Exit.INCOMPLETE}
