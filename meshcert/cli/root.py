"""The command line's root: its settings, `--version`, and which module holds each command
group. A run imports only the group it names (meshcert.cli.app_for), not all seven, whose
imports would cost every command ~8 ms; meshcert.cli.whole imports them all."""

from __future__ import annotations

import importlib
from typing import Annotated, Any

import typer

from meshcert.cli.boundary import Boundary
from meshcert.cli.exit_codes import Exit

SETTINGS: dict[str, Any] = dict(
    name="meshcert",
    # the one error boundary: any exception a command lets through ends here, as one line
    cls=Boundary,
    help="Certify mesh-llm layer packages and turn benchmark evidence into decisions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and usage errors: rich's help panels cost more start-up time (rich.markdown,
    # pygments) than the rest of `meshcert --help` together, and plain text reads at 80 columns.
    rich_markup_mode=None,
)
# each command group's module (meshcert.cli.<module>, whose `app` it is)
GROUP_MODULES = {"models": "models_cmd", "report": "report_cmd", "evidence": "evidence_cmd",
                 "package": "package_cmd", "catalog": "catalog_cmd", "attest": "attest_cmd",
                 "job": "job_group"}


def group_app(name: str) -> typer.Typer:
    """The `app` of the command group `name` (its module imported on first use)."""
    group: typer.Typer = importlib.import_module(f"meshcert.cli.{GROUP_MODULES[name]}").app
    return group


def _print_version(value: bool) -> None:
    if value:
        from meshcert.core.version import __version__

        typer.echo(f"meshcert {__version__}")
        raise typer.Exit(Exit.PASSED)


def root_options(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print `meshcert X.Y.Z` and exit.")] = False) -> None:
    pass  # the options of `meshcert` itself: the whole app's callback (no docstring: no help)
