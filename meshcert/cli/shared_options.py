"""Options that mean the same on every command that takes them: one definition, one help text.

- `--strict`: any warning fails. On `models certify` a warning finding fails the package gate
  and the runtime gates that only warn become required; on `catalog certify` each package is
  certified that way and a row with any warning (unpinned entry, mesh-llm would refuse, ...)
  fails.
- `--catalog NS/NAME` on the commands that publish (`package publish`, `package write
  --publish`, `package job`): the catalog the pinned package is added to. None by default on
  all three: adding an entry to a shared dataset (mesh-llm's is `meshllm/catalog`) is a change
  to someone else's repo, made only when asked. `hf://datasets/NS/NAME` (the spelling `catalog
  certify` takes) and `none` are accepted too.
- The report files (`--html`, `--md`, `--junit`, `--sarif`: one option per row of
  meshcert/reports/registry.py that has a `ReportOption`) are not here: they come from the
  registry through `@report_outputs` (meshcert/cli/report_options.py).
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

STRICT_HELP = ("Any warning fails: warning findings fail the package, the runtime gates that "
               "only warn are required, and (catalog certify) a row with any warning fails.")
StrictOpt = Annotated[bool, typer.Option("--strict", help=STRICT_HELP)]

CATALOG_HELP = ("Add the pinned package to this catalog dataset, NS/NAME or "
                "hf://datasets/NS/NAME (mesh-llm's is meshllm/catalog); a pull request when "
                "--experimental or the token cannot push. Default: none.")
CatalogTargetOpt = Annotated[str | None, typer.Option(
    "--catalog", metavar="NS/NAME", help=CATALOG_HELP)]

_DATASET_PREFIX = "hf://datasets/"


def catalog_target(value: str | None) -> str | None:
    """The catalog's repo id as the publishers take it (None: no catalog entry)."""
    if value is None or value.strip().lower() == "none":
        return None
    return value.removeprefix(_DATASET_PREFIX).rstrip("/")


# `--quiet` and `--json`: one flag spelling and type each. What `--json` prints differs per
# command, so its help is the command's own; `--quiet` keeps one help where stdout is a
# summary (QuietOpt) and says what it keeps where it is more.
QUIET_HELP = "Print nothing on stdout; errors still go to stderr."


def quiet_option(help: str = QUIET_HELP) -> Any:
    """The `--quiet` / `-q` option (typer's OptionInfo) with this help."""
    return typer.Option("--quiet", "-q", help=help)


def json_option(help: str) -> Any:
    """The `--json` option (typer's OptionInfo); `help` says what JSON the command prints."""
    return typer.Option("--json", help=help)


QuietOpt = Annotated[bool, quiet_option()]

# the --json of the commands that print a certification report (`models certify`, `models inspect`)
ReportJsonOpt = Annotated[bool, json_option("Print the report JSON.")]

# the package format of the commands that write, plan or submit a package write
PackageFormatOpt = Annotated[str, typer.Option("--format", help="v2 (default) or v1.")]
