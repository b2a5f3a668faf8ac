"""`--strict`, `--catalog` and the report outputs (`--html`, `--md`, `--junit`, `--sarif`) mean
the same on every command that takes them (one definition each: meshcert.cli.shared_options,
and for the report outputs the rows of meshcert.reports.registry), read from the commands' own
click parameters."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from meshcert.cli import app
from meshcert.cli.shared_options import CATALOG_HELP, STRICT_HELP, catalog_target
from meshcert.reports.registry import report_options
from tests.cli.test_cli_help_text import commands


def _commands() -> dict[str, Any]:
    return {path.removeprefix("meshcert "): command
            for path, command in commands(typer.main.get_command(app))}


def _option(command: Any, flag: str) -> Any:
    """(typer ships its own click, so options are found by their flags, not click's types.)"""
    for param in command.params:
        if flag in getattr(param, "opts", ()):
            return param
    return None


def test_every_strict_option_has_the_one_meaning() -> None:
    having = {name: _option(cmd, "--strict") for name, cmd in _commands().items()}
    having = {name: opt for name, opt in having.items() if opt is not None}
    assert set(having) == {"models certify", "catalog certify"}
    for name, opt in having.items():
        assert opt.help == STRICT_HELP and opt.default is False, name


def test_every_publishing_catalog_option_defaults_to_none_with_the_same_help() -> None:
    commands = _commands()
    for name in ("package publish", "package write", "package job"):
        opt = _option(commands[name], "--catalog")
        assert opt is not None, name
        assert opt.default is None and opt.help == CATALOG_HELP, name


REPORT_WRITERS = {"models certify", "models inspect", "package write", "report render",
                  "report merge", "evidence report", "evidence run", "catalog certify"}


@pytest.mark.parametrize("fmt", list(report_options()))
def test_every_report_output_option_has_the_one_meaning(fmt: str) -> None:
    flag, help_text = report_options()[fmt].flag, report_options()[fmt].help
    having = {name: _option(cmd, flag) for name, cmd in _commands().items()}
    having = {name: opt for name, opt in having.items() if opt is not None}
    assert set(having) == REPORT_WRITERS
    for name, opt in having.items():
        assert opt.name == fmt and opt.help == help_text and opt.default is None, name


@pytest.mark.parametrize(("given", "target"), [
    (None, None), ("none", None), ("NONE", None), ("meshllm/catalog", "meshllm/catalog"),
    ("hf://datasets/meshllm/catalog", "meshllm/catalog"),
    ("hf://datasets/alice/my-catalog/", "alice/my-catalog"),
])
def test_catalog_targets_take_both_spellings(given: str | None, target: str | None) -> None:
    assert catalog_target(given) == target
