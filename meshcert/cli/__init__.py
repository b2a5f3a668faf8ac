"""The command line: the only place that parses argv, prints, shows progress and exits."""

from __future__ import annotations

import gc
import os
import sys
from typing import TYPE_CHECKING

import typer

from meshcert.cli.root import GROUP_MODULES, SETTINGS, group_app
from meshcert.core.lazy import lazy_exports

if TYPE_CHECKING:
    from meshcert.cli.whole import GROUPS, app

# `app` (the whole command line) and `GROUPS` import every command group: loaded on first use
__getattr__ = lazy_exports(__name__, {"whole": ("GROUPS", "app")})
__all__ = ["GROUPS", "app"]


def app_for(argv: list[str]) -> typer.Typer:
    """The whole app, or, when argv starts with a command group's name, an app holding only
    that group (only its module imported).

    typer builds every command's options from its signature on each run, for all 24 commands
    (about 15 ms, a twentieth of a `models certify`), though only one group's can be reached;
    the group, its commands, their help and errors are the same objects either way.
    """
    if not argv or argv[0] not in GROUP_MODULES:
        from meshcert.cli.whole import app

        return app
    only = typer.Typer(**SETTINGS)
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
    # A reader that leaves early (`meshcert ... | head -1`) never changes the exit status
    from meshcert.cli.pipe import keep_status_on_closed_pipes

    keep_status_on_closed_pipes()
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
