"""The exit status of an evidence step (docs/evidence.md, "Exit statuses"), by one rule for
`evidence gate`, `report`, `run` and `history --gate`:

1. an enforced Phase E gate that failed, or a broken `--package` rule: 2 (the script's status);
2. nothing read (no row from any input): 1, as `evidence ingest`;
3. the verdict, when asked to fail on it (`--fail-on failed|incomplete`, the decision rules
   file's `fail_on`, or a required gate, which fails on both): FAILED 1, INCOMPLETE 3;
4. else 0.
"""

from __future__ import annotations

from typing import Literal

from meshcert.cli.exit_codes import Exit, ExitStatus

FailOn = Literal["failed", "incomplete"]
FAIL_ON_CHOICES: tuple[FailOn, ...] = ("failed", "incomplete")
VERDICT_EXIT: dict[str, ExitStatus] = {"failed": Exit.FAILED, "incomplete": Exit.INCOMPLETE}


def verdict_exit(status: str, fail_on: FailOn | None, *, required: bool = False) -> ExitStatus:
    """The exit status a verdict asks for: a required gate fails on FAILED and INCOMPLETE,
    `failed` on FAILED only, `incomplete` on both (an incomplete verdict never passes where
    a failed one would not)."""
    if required:
        fail_on = "incomplete"
    if fail_on is None or status not in VERDICT_EXIT:
        return Exit.PASSED
    if status == "incomplete" and fail_on == "failed":
        return Exit.PASSED
    return VERDICT_EXIT[status]


def nothing_read_message(files: int) -> str:
    return (f"error: nothing read: no evidence rows in any of the {files} file(s) (each one's "
            "problem is listed above); an empty or crashed benchmark log is not evidence")
