"""`app_for(argv)`: a run that names a command group builds only that group, and a user sees
exactly what the whole app shows: the same help, the same errors, the same exit statuses."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from meshcert.cli import GROUPS, app, app_for

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
