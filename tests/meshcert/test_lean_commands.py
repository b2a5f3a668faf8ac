"""Lean commands: a command function parses its options into its request object and hands it
on, so none grows past 80 lines (decorator, options and body together); the option rules live
beside the request in the part that owns it (tested there), and a rule's OptionError reaches
the user as the same usage error typer gives for an option it checks itself."""

from __future__ import annotations

import inspect
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.cli.usage import parsed
from meshcert.core.options import OptionError
from tests.meshcert.test_cli_help_text import commands

MAX_LINES = 80
# the modules made lean so far; the rest of meshcert/cli/ joins as its commands are
LEAN_MODULES = {"meshcert.cli.evidence_cmd", "meshcert.cli.job_cmd", "meshcert.cli.job_group",
                "meshcert.cli.report_cmd", "meshcert.cli.attest_cmd", "meshcert.cli.demo_cmd"}


def _callbacks() -> dict[str, Any]:
    return {path: command.callback for path, command in commands(typer.main.get_command(app))
            if command.callback is not None
            and command.callback.__module__ in LEAN_MODULES}


def test_the_lean_modules_hold_commands() -> None:
    assert {cb.__module__ for cb in _callbacks().values()} == LEAN_MODULES


@pytest.mark.parametrize("path", sorted(_callbacks()))
def test_no_command_function_is_over_80_lines(path: str) -> None:
    lines, _start = inspect.getsourcelines(_callbacks()[path])
    assert len(lines) <= MAX_LINES, f"{path}: {len(lines)} lines"


def test_a_rule_breaks_as_typers_own_usage_error() -> None:
    def rule() -> None:
        raise OptionError("must not be blank", "--label")

    with pytest.raises(typer.BadParameter) as caught:
        parsed(rule)
    assert caught.value.format_message() == "Invalid value for --label: must not be blank"
    assert caught.value.exit_code == 2
    assert parsed(lambda: 7) == 7


def test_a_command_shows_a_rules_error_as_a_usage_error(tmp_path: Any) -> None:
    log = tmp_path / "a.log"
    log.write_text("")
    result = CliRunner().invoke(app, ["evidence", "ingest", str(log), "--label", " "])
    assert result.exit_code == 2
    assert "Invalid value for --label: must not be blank" in result.output
