"""The command line: the only place that parses argv, prints, shows progress and exits."""

from __future__ import annotations

import typer

from meshcert.cli import demo_cmd, evidence_cmd, models_cmd, report_cmd

app = typer.Typer(
    name="meshcert",
    help="Certify mesh-llm layer packages and turn benchmark evidence into decisions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.add_typer(models_cmd.app, name="models")
app.add_typer(report_cmd.app, name="report")
app.add_typer(evidence_cmd.app, name="evidence")
app.command("demo")(demo_cmd.demo)


def main() -> None:
    app()
