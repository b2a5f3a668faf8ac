"""The whole command line: every command group, `demo` and `--version` (what `meshcert` with
no group named, `--help` among them, runs; `meshcert.cli.app` and `GROUPS` load from here)."""

from __future__ import annotations

import typer

from meshcert.cli import demo_cmd, serve_cmd
from meshcert.cli.root import GROUP_MODULES, SETTINGS, group_app, root_options

GROUPS = {name: group_app(name) for name in GROUP_MODULES}

app = typer.Typer(**SETTINGS)
app.callback()(root_options)
for _name, _group in GROUPS.items():
    app.add_typer(_group, name=_name)
app.command("demo")(demo_cmd.demo)
app.command("serve")(serve_cmd.serve)
