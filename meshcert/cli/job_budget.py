"""What every HF Jobs command does with a plan before spending money: refuse one above
--max-cost-usd, and end a dry run with the plan and how to submit it."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NoReturn

import typer

from meshcert.cli.exit_codes import Exit

USAGE = Exit.USAGE  # typer's usage-error status: a refused plan submits nothing


def refuse_over_budget(max_cost_usd: float, limit: float | None) -> None:
    if limit is not None and max_cost_usd > limit:
        typer.echo(f"refused: the maximum cost ${max_cost_usd:.4f} is above "
                   f"--max-cost-usd {limit}", err=True)
        raise typer.Exit(USAGE)


def end_dry_run(plan: dict[str, Any], *, json_out: bool, what: str,
                say: Callable[[str], None]) -> NoReturn:
    if json_out:
        typer.echo(json.dumps(plan, indent=2))
    say(f"dry run: run again with --confirm to submit {what} (at most "
        f"${plan['max_cost_usd']:.4f})")
    raise typer.Exit(Exit.PASSED)
