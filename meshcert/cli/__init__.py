"""The command line: the only place that parses argv, prints, shows progress and exits."""

from __future__ import annotations

import gc
import importlib
import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from meshcert.cli.exit_codes import Exit

if TYPE_CHECKING:
    from collections.abc import Mapping

_SETTINGS: dict[str, Any] = dict(
    name="meshcert",
    help="Certify mesh-llm layer packages and turn benchmark evidence into decisions.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and usage errors: rich's help panels cost more start-up time (rich.markdown,
    # pygments) than the rest of `meshcert --help` together, and plain text reads at 80 columns.
    rich_markup_mode=None,
)
# Each command group's module (meshcert.cli.<module>, its `app`): a run imports only the group
# it names (`group_app`), not the seven, whose imports would cost every command ~8 ms.
GROUP_MODULES = {"models": "models_cmd", "report": "report_cmd", "evidence": "evidence_cmd",
                 "package": "package_cmd", "catalog": "catalog_cmd", "attest": "attest_cmd",
                 "job": "job_group"}


def group_app(name: str) -> typer.Typer:
    """The `app` of the command group `name` (imported on first use)."""
    module = importlib.import_module(f"meshcert.cli.{GROUP_MODULES[name]}")
    group: typer.Typer = module.app
    return group


def _print_version(value: bool) -> None:
    if value:
        from meshcert.core.version import __version__

        typer.echo(f"meshcert {__version__}")
        raise typer.Exit(Exit.PASSED)


def _root(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_print_version,
        help="Print `meshcert X.Y.Z` and exit.")] = False) -> None:
    pass


def whole_app() -> typer.Typer:
    """The whole command line: every group, `demo` and `--version` (built once)."""
    if _WHOLE:
        return _WHOLE[0]
    from meshcert.cli import demo_cmd

    whole = typer.Typer(**_SETTINGS)
    whole.callback()(_root)
    for name in GROUP_MODULES:
        whole.add_typer(group_app(name), name=name)
    whole.command("demo")(demo_cmd.demo)
    _WHOLE.append(whole)
    return whole


_WHOLE: list[typer.Typer] = []


def groups() -> Mapping[str, typer.Typer]:
    """Every command group's `app`, by name (imports them all)."""
    return {name: group_app(name) for name in GROUP_MODULES}


def __getattr__(name: str) -> Any:  # PEP 562: `app` and `GROUPS` import every group
    if name == "app":
        return whole_app()
    if name == "GROUPS":
        return groups()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def app_for(argv: list[str]) -> typer.Typer:
    """The whole app, or, when argv starts with a command group's name, an app holding only
    that group (only its module imported).

    typer builds every command's options from its signature on each run, for all 18 commands
    (about 15 ms, a twentieth of a `models certify`), though only one group's can be reached;
    the group, its commands, their help and errors are the same objects either way.
    """
    if not argv or argv[0] not in GROUP_MODULES:
        return whole_app()
    only = typer.Typer(**_SETTINGS)
    only.add_typer(group_app(argv[0]), name=argv[0])
    return only


def main() -> None:
    """The console entry point (`meshcert`, `python -m meshcert`)."""
    # The interpreter's own exit: it joins threads, runs the atexit hooks (spare-worker
    # cleanup, logging shutdown) and flushes the streams in the documented order. Only its
    # garbage-collection passes are skipped: with typer, pydantic and the engine loaded they
    # walk every object (~100 ms of a 0.7 s `models certify`, bench/whole_process.py) to free
    # memory the OS reclaims anyway. `gc.freeze()` (public, documented) moves what exists now
    # out of the collector's reach; modules are still cleared and their objects released.
    # Every file meshcert writes is closed by a `with` block before this point.
    # The collector's youngest generation runs every 700 allocations by default; loading typer,
    # pydantic and the engine allocates millions of objects that all stay alive, so most of
    # those passes find nothing (~50 ms of a 0.65 s `models certify`, bench/whole_process.py).
    # A larger first threshold (public gc API, this process only) keeps cycles collected.
    gc.set_threshold(50_000)
    try:
        _run()
    finally:
        gc.freeze()


def _run() -> None:
    # pydantic looks for plugins in every installed distribution's entry points the first time
    # a model is built (tens of ms per run); meshcert's report models are not meant to be
    # observed by them. A value the user set is kept.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    # huggingface_hub reads this once, at import (none has happened yet): meshcert's uploads go
    # over LFS, never Xet (meshcert.publish.hub_writer says why). A value the user set is kept.
    os.environ.setdefault("HF_HUB_DISABLE_XET", "1")
    argv = sys.argv[1:]
    if argv[:2] in (["models", "certify"], ["package", "write"]) \
            and not {"--help", "--version"} & set(argv):
        # Its worker processes take ~80 ms to boot; started before typer parses the options
        # (which imports pydantic, ~65 ms) they are ready when the package is (`package
        # write`: when the closing certification asks them, instead of booting after the
        # write, in series). `--help` and `--version` start none; a usage error just leaves
        # them idle, and atexit discards them.
        from meshcert.certify.workers import prestart_workers

        prestart_workers()
    app_for(argv)()
