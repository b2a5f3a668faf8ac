"""What each evidence command is asked, as one object, and the rules its options follow.

The CLI parses its options into these and hands them to the service (meshcert.evidence.service,
meshcert.evidence.run); the rules are pure functions of the option values that raise
`OptionError` (meshcert.core.usage) naming the option at fault, so they are tested without
the CLI. This module loads nothing heavy: `evidence ingest` of a small log needs no numpy.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from meshcert.core.usage import OptionError

if TYPE_CHECKING:  # numpy and pandas load with these, when the command needs them
    from meshcert.evidence.decisions import DecisionOptions
    from meshcert.evidence.run.plan import RunPlan


def check_label(label: str | None) -> str | None:
    """--label: a variant label for every row, never blank (None: from the file names)."""
    if label is not None and not label.strip():
        raise OptionError("must not be blank", "--label")
    return label


@dataclass(frozen=True)
class DecisionsInput:
    """The user's own decisions file (--decisions), and whether it was given by the
    deprecated --catalog alias (the CLI warns then)."""

    path: Path | None
    via_deprecated_alias: bool = False


def decisions_input(decisions: Path | None, deprecated_alias: Path | None) -> DecisionsInput:
    """--decisions FILE, or its deprecated alias --catalog FILE; not both."""
    if deprecated_alias is None:
        return DecisionsInput(decisions)
    if decisions is not None:
        raise OptionError("give --decisions only (--catalog is its deprecated alias)",
                          "--catalog")
    return DecisionsInput(deprecated_alias, via_deprecated_alias=True)


@dataclass(frozen=True)
class IngestRequest:
    """`evidence ingest`: the logs, where the evidence JSON goes, the variant label."""

    files: tuple[Path, ...]
    out: Path | None = None
    label: str | None = None

    def __post_init__(self) -> None:
        check_label(self.label)


@dataclass(frozen=True)
class Judging:
    """What gate, report and run judge the evidence by: --require-gates (as
    GLM52_PHASE_E_REQUIRE_GATES=1), --phase-e, the backend, the user's decisions file."""

    require_gates: bool = False
    phase_e: bool = False
    backend: str | None = None
    decisions_file: Path | None = None


@dataclass(frozen=True)
class GateRequest:
    """`evidence gate`: the Phase E MoE gate of the logs."""

    files: tuple[Path, ...]
    judging: Judging = field(default_factory=Judging)
    label: str | None = None


@dataclass(frozen=True)
class ReportRequest:
    """`evidence report`: gate + decisions of the logs, written under out_dir, with the
    q2_K routed-down rule checked on `package` when one is given."""

    files: tuple[Path, ...]
    out_dir: Path
    judging: Judging = field(default_factory=Judging)
    label: str | None = None
    decisions: DecisionOptions | None = None  # None: the decisions' defaults
    package: str | None = None
    source_gguf: str | None = None


@dataclass(frozen=True)
class RunOptions:
    """`evidence run`'s options that shape the runs, as given on the command line."""

    command: Sequence[str]
    variants: Sequence[str] = ()
    env: Sequence[str] = ()
    args: Sequence[str] = ()
    commands: Sequence[str] = ()
    checks: Sequence[str] = ()
    repeats: int = 1
    timeout_s: float | None = None
    stream: str = "auto"


def run_plan_of(options: RunOptions) -> RunPlan:
    """The runs `evidence run` makes; a bad variant, check or stream raises PlanError."""
    from meshcert.evidence.run.plan import RunPlan, Stream, build_variants, split_command

    return RunPlan(tuple(options.command),
                   build_variants(options.variants, options.env, options.args,
                                  options.commands),
                   repeats=options.repeats, timeout_s=options.timeout_s,
                   stream=cast(Stream, options.stream),
                   checks=tuple(tuple(split_command(c, "--check")) for c in options.checks))


@dataclass(frozen=True)
class RunRequest:
    """`evidence run`: the plan, where its records go, how the evidence is judged."""

    plan: RunPlan
    out_dir: Path
    judging: Judging = field(default_factory=Judging)
