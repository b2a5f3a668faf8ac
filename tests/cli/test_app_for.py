"""`app_for(argv)`: a run that names a command group builds only that group, and a user sees
exactly what the whole app shows: the same help, the same errors, the same exit statuses."""

from __future__ import annotations

import re

import pytest
import typer.main
from typer.testing import CliRunner

import meshcert.cli
from meshcert.cli import GROUPS, app, app_for
from meshcert.cli.root import GROUP_MODULES
from tests.cli.test_cli_help_text import commands

ARGVS = [[group, *tail] for group, commands in
         (("models", ["certify", "inspect"]), ("report", ["render", "merge"]),
          ("evidence", ["run", "ingest", "gate", "report"]), ("package", ["publish"]),
          ("catalog", ["certify"]), ("job", ["list", "status", "logs", "cancel"]))
         for tail in ([], ["--help"], ["bogus"], *([c, "--help"] for c in commands))]


@pytest.mark.parametrize("argv", ARGVS, ids=" ".join)
def test_one_group_answers_as_the_whole_app(argv: list[str]) -> None:
    runner = CliRunner()
    whole = runner.invoke(app, argv, prog_name="meshcert")
    only = runner.invoke(app_for(argv), argv, prog_name="meshcert")
    assert (only.exit_code, only.output) == (whole.exit_code, whole.output)


def test_no_group_named_means_the_whole_app() -> None:
    assert app_for([]) is app and app_for(["demo"]) is app and app_for(["--help"]) is app
    assert app_for(["models"]) is not app
    assert set(GROUPS) == {"models", "report", "evidence", "package", "catalog", "attest",
                           "job"}


def test_the_counts_the_cli_states_are_the_apps() -> None:
    """The docstrings that say how many commands and groups there are say it rightly."""
    leaves = [path for path, command in commands(typer.main.get_command(app))
              if not hasattr(command, "commands")]
    counted = re.search(r"for all (\d+) commands", meshcert.cli.app_for.__doc__ or "")
    assert counted is not None and int(counted.group(1)) == len(leaves), leaves
    words = {"seven": 7, "eight": 8, "nine": 9, "ten": 10}
    groups = re.search(r"not all (\w+),", meshcert.cli.root.__doc__ or "")
    assert groups is not None and words.get(groups.group(1)) == len(GROUP_MODULES)
