"""The command line: the only place that parses argv, prints, shows progress and exits."""

from __future__ import annotations

import os

import typer

from meshcert.cli import demo_cmd, evidence_cmd, models_cmd, report_cmd
from meshcert.cli.fast_exit import exit_without_teardown, status_of

app = typer.Typer(
    name="meshcert",
    help="Certify mesh-llm layer packages and turn benchmark evidence into decisions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and usage errors: rich's help panels cost more start-up time (rich.markdown,
    # pygments) than the rest of `meshcert --help` together, and plain text reads at 80 columns.
    rich_markup_mode=None,
)
app.add_typer(models_cmd.app, name="models")
app.add_typer(report_cmd.app, name="report")
app.add_typer(evidence_cmd.app, name="evidence")
app.command("demo")(demo_cmd.demo)


def main() -> None:
    """The console entry point (`meshcert`, `python -m meshcert`)."""
    try:
        _run()
    except SystemExit as exc:
        exit_without_teardown(status_of(exc))
    exit_without_teardown(0)


def _run() -> None:
    # pydantic looks for plugins in every installed distribution's entry points the first time
    # a model is built (tens of ms per run); meshcert's report models are not meant to be
    # observed by them. A value the user set is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    app()
