"""`--help` of every command, kept as written: refactors of the CLI (#36) must not change a
command, an option, its help or its default. Regenerate on purpose with
`python -m tests.cli.test_help_snapshot` and review the diff."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from meshcert.cli import app
from tests.cli.test_cli_help_text import commands

SNAPSHOTS = Path(__file__).parent / "snapshots" / "help"
ENV = {"COLUMNS": "100", "TERM": "dumb", "NO_COLOR": "1", "FORCE_COLOR": ""}


def _params(command: Any) -> list[dict[str, Any]]:
    return [{"name": p.name, "opts": list(p.opts), "secondary": list(p.secondary_opts),
             "required": p.required, "default": repr(p.default) if not callable(p.default)
             else "<callable>", "multiple": p.multiple, "help": getattr(p, "help", None),
             "hidden": getattr(p, "hidden", False)}
            for p in command.params]


def _snapshot() -> dict[str, Any]:
    runner = CliRunner()
    shots: dict[str, Any] = {}
    for path, command in commands(typer.main.get_command(app)):
        argv = path.split()[1:] + ["--help"]
        result = runner.invoke(app, argv, env=ENV, color=False, terminal_width=100)
        shots[path] = {"exit": result.exit_code, "help": result.output,
                       "params": _params(command)}
    return shots


def _file(path: str) -> Path:
    return SNAPSHOTS / (path.replace(" ", "_") + ".json")


def _write() -> None:
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    for path, shot in _snapshot().items():
        _file(path).write_text(json.dumps(shot, indent=1, sort_keys=True) + "\n")


@pytest.fixture(scope="module")
def snapshot() -> dict[str, Any]:
    return _snapshot()


def test_every_command_is_in_the_snapshot(snapshot: dict[str, Any]) -> None:
    assert sorted(_file(p).name for p in snapshot) == sorted(p.name for p in
                                                              SNAPSHOTS.glob("*.json"))


def test_every_command_s_help_and_options_are_unchanged(snapshot: dict[str, Any]) -> None:
    changed = [path for path, shot in snapshot.items()
               if not _file(path).exists() or json.loads(_file(path).read_text()) != shot]
    assert changed == []


if __name__ == "__main__":
    _write()
    sys.exit(0)
