"""The exit statuses of every meshcert command, by name (certification.md, evidence.md).

`Exit.PASSED` 0, `Exit.FAILED` 1, `Exit.USAGE` 2 (typer's own status for a usage error, and a
refusal before anything is spent), `Exit.INCOMPLETE` 3, `Exit.INTERRUPTED` 130 (Ctrl-C, after
writing what was recorded). The Phase E evidence gate keeps its documented status 2 as
`Exit.PHASE_E_GATE_FAILED` (an enforced gate failure, a package rule failure or a bad setting),
and `evidence history --gate` its status 1 as `Exit.HISTORY_REGRESSED`.
"""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    PASSED = 0
    FAILED = 1
    USAGE = 2
    INCOMPLETE = 3
    INTERRUPTED = 130
    PHASE_E_GATE_FAILED = 2
    HISTORY_REGRESSED = 1
    # `publish` / `package publish`: a refused publish (nothing uploaded), as a usage error.
    REFUSED = 2


# A report's status -> its exit status (certification and catalog reports).
EXIT_CODES: dict[str, Exit] = {"passed": Exit.PASSED, "failed": Exit.FAILED,
                               "incomplete": Exit.INCOMPLETE}
