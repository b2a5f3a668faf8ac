"""Lean commands: a command parses its options into its request object and hands it on (no
function of meshcert/cli/ is over 80 lines: tests/test_code_quality.py); the option rules live
beside the request in the part that owns it (tested there), and a rule's OptionError reaches
the user as the same usage error typer gives for an option it checks itself."""

from __future__ import annotations

from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from meshcert.cli import app
from meshcert.cli.option_errors import option_errors
from meshcert.core.errors import ErrorKind
from meshcert.core.usage import OptionError


def test_a_rule_breaks_as_typers_own_usage_error() -> None:
    with pytest.raises(typer.BadParameter) as caught, option_errors():
        raise OptionError("must not be blank", "--label")
    assert caught.value.format_message() == "Invalid value for --label: must not be blank"
    assert caught.value.exit_code == 2


def test_an_option_error_is_a_usage_error_of_the_one_family() -> None:
    assert OptionError("must be > 0", "--stages").kind is ErrorKind.USAGE
    assert OptionError("must be > 0", "--stages").exit_status == 2


def test_a_command_shows_a_rules_error_as_a_usage_error(tmp_path: Any) -> None:
    log = tmp_path / "a.log"
    log.write_text("")
    result = CliRunner().invoke(app, ["evidence", "ingest", str(log), "--label", " "])
    assert result.exit_code == 2
    assert "Invalid value for --label: must not be blank" in result.output
