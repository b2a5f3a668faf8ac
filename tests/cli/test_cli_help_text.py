"""Every command, option and argument of `meshcert` says what it is for in its --help."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer.main

from meshcert.cli import app


def commands(group: Any, path: str = "meshcert") -> Iterator[tuple[str, Any]]:
    """(typer ships its own click: the tree is walked by its `commands`, not click's types.)"""
    yield path, group
    if hasattr(group, "commands"):
        for name, sub in group.commands.items():
            yield from commands(sub, f"{path} {name}")


def test_every_parameter_has_help() -> None:
    missing = []
    for path, command in commands(typer.main.get_command(app)):
        if not (command.help or command.short_help):
            missing.append(path)
        for param in command.params:
            if not getattr(param, "help", None):
                missing.append(f"{path} {param.name}")
    assert missing == []


def test_the_tree_holds_every_group() -> None:
    paths = {path for path, _ in commands(typer.main.get_command(app))}
    assert {"meshcert job list", "meshcert job status", "meshcert job logs",
            "meshcert job cancel", "meshcert package job", "meshcert models certify",
            "meshcert report render", "meshcert catalog certify",
            "meshcert evidence report"} <= paths
