"""What to run: one fixture command, its variants, how many repeats, in which order.

A variant is a label (the `variant` column the decision rules match on) plus what makes it
different: environment overrides (the GLM kernel sweep: same binary, same arguments, different
`GGML_METAL_*` settings), extra arguments, or a whole other command (an old vs a new build).

The order interleaves the variants, A B A B ..., so slow drift of the machine (thermals, other
load) lands on every variant alike instead of on whichever ran last.

A plan may also carry check commands (test-backend-ops `test` mode: the parity evidence a
promotion needs), run once per variant, with the variant's environment and extra arguments,
before the timed runs. Their rows carry the variant label like the timed ones, so the rules
finds parity for exactly the variant it decides about.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from meshcert.evidence.defaults import DEFAULT_REPEATS
from meshcert.evidence.errors import EvidenceError

Stream = Literal["auto", "merged", "stdout", "stderr"]
STREAMS: tuple[str, ...] = ("auto", "merged", "stdout", "stderr")

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,79}$")
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PlanError(EvidenceError):
    """A run plan a user wrote that cannot be run; the message names the bad part."""


@dataclass(frozen=True)
class Variant:
    name: str
    env: Mapping[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    command: tuple[str, ...] | None = None  # replaces the plan's command for this variant

    def argv(self, common: Sequence[str]) -> tuple[str, ...]:
        return (*(self.command if self.command is not None else common), *self.args)

    def check_argv(self, check: Sequence[str]) -> tuple[str, ...]:
        return (*check, *self.args)


@dataclass(frozen=True)
class PlannedRun:
    index: int  # 1-based position in the run order
    variant: Variant
    repeat: int  # 1..repeats (checks: 1)
    argv: tuple[str, ...]
    role: Literal["timed", "check"] = "timed"


@dataclass(frozen=True)
class RunPlan:
    command: tuple[str, ...]
    variants: tuple[Variant, ...]
    repeats: int = DEFAULT_REPEATS
    timeout_s: float | None = None
    cwd: str | None = None
    stream: Stream = "auto"
    checks: tuple[tuple[str, ...], ...] = ()

    def __post_init__(self) -> None:
        if self.repeats < 1:
            raise PlanError(f"repeats must be at least 1, got {self.repeats}")
        if not self.variants:
            raise PlanError("a plan needs at least one variant")
        names = [v.name for v in self.variants]
        duplicated = sorted({n for n in names if names.count(n) > 1})
        if duplicated:
            raise PlanError(f"variant given twice: {', '.join(duplicated)}")
        for v in self.variants:
            if not v.argv(self.command):
                raise PlanError(f"variant {v.name!r} has no command to run")
        if any(not c for c in self.checks):
            raise PlanError("a check needs a command")
        if self.stream not in STREAMS:
            raise PlanError(f"stream must be one of {', '.join(STREAMS)}, got {self.stream!r}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise PlanError(f"timeout must be positive, got {self.timeout_s}")

    def order(self) -> list[PlannedRun]:
        """Checks first (each once per variant), then A B A B ...: repeat 1 of every variant,
        then repeat 2 of every variant, ..."""
        runs: list[PlannedRun] = []
        for check in self.checks:
            for v in self.variants:
                runs.append(PlannedRun(len(runs) + 1, v, 1, v.check_argv(check), "check"))
        for r in range(self.repeats):
            for v in self.variants:
                runs.append(PlannedRun(len(runs) + 1, v, r + 1, v.argv(self.command)))
        return runs


def _split_named(spec: str, option: str) -> tuple[str, str]:
    name, sep, value = spec.partition(":")
    if not sep:
        raise PlanError(f"{option} {spec!r}: expected VARIANT:VALUE")
    return check_name(name.strip(), option), value


def check_name(name: str, option: str = "--variant") -> str:
    if not _NAME.match(name):
        raise PlanError(f"{option}: variant name {name!r} must be 1-80 characters of letters, "
                        "digits, '.', '_', '+', '-' (it names files and rows)")
    return name


def build_variants(names: Iterable[str] = (), env: Iterable[str] = (),
                   args: Iterable[str] = (), commands: Iterable[str] = ()) -> tuple[Variant, ...]:
    """Variants from CLI specs: `--variant NAME`, `--env NAME:KEY=VALUE`, `--args NAME:ARGS`
    (shell-split, appended), `--command NAME:CMD` (shell-split, replaces the command).

    Order: the `--variant` names first, then any name first seen in the other specs. With no
    spec at all there is one variant, `default` (repeated runs of one fixture)."""
    order: dict[str, None] = {check_name(n.strip()): None for n in names}
    envs: dict[str, dict[str, str]] = {}
    extra: dict[str, list[str]] = {}
    replaced: dict[str, tuple[str, ...]] = {}
    for spec in env:
        name, value = _split_named(spec, "--env")
        key, sep, val = value.partition("=")
        if not sep or not _ENV_KEY.match(key):
            raise PlanError(f"--env {spec!r}: expected VARIANT:KEY=VALUE with a valid "
                            "variable name")
        envs.setdefault(name, {})[key] = val
        order.setdefault(name, None)
    for spec in args:
        name, value = _split_named(spec, "--args")
        extra.setdefault(name, []).extend(split_command(value, f"--args {spec!r}"))
        order.setdefault(name, None)
    for spec in commands:
        name, value = _split_named(spec, "--command")
        if name in replaced:
            raise PlanError(f"--command given twice for variant {name!r}")
        argv = tuple(split_command(value, f"--command {spec!r}"))
        if not argv:
            raise PlanError(f"--command {spec!r}: empty command")
        replaced[name] = argv
        order.setdefault(name, None)
    if not order:
        return (Variant("default"),)
    return tuple(Variant(n, envs.get(n, {}), tuple(extra.get(n, ())), replaced.get(n))
                 for n in order)


def split_command(text: str, where: str) -> list[str]:
    """Shell-style words (quotes honoured); a PlanError naming `where` when unbalanced."""
    try:
        return shlex.split(text)
    except ValueError as exc:
        raise PlanError(f"{where}: {exc}") from None
