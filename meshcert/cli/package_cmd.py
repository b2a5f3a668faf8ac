"""`meshcert package ...`: making and publishing layer packages."""

from __future__ import annotations

import typer

from meshcert.cli import publish_cmd

app = typer.Typer(help="Write and publish layer packages.", no_args_is_help=True,
                  rich_markup_mode=None)
app.command("publish")(publish_cmd.publish)
