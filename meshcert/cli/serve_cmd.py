"""`meshcert serve`: certify package commits and catalog pull requests from Hub webhooks
(docs/serve.md). Starlette and uvicorn are imported only when the command runs (the `serve`
extra)."""

from __future__ import annotations

from typing import Annotated

import typer

from meshcert.cli.exit_codes import Exit


def serve(
    config: Annotated[str, typer.Option("--config", metavar="serve.toml", help="The service's "
                                        "configuration (docs/serve.md).")],
    host: Annotated[str, typer.Option("--host", help="The address to listen on.")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="The port to listen "
                                      "on.")] = 8080,
    log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning or "
                                           "error.")] = "info",
) -> None:
    """Certify every package commit and catalog pull request the Hub's webhooks announce,
    sign the verdicts and post them on the pull requests (HF_ENDPOINT and HF_TOKEN from the
    environment); SIGTERM drains or requeues the running jobs."""
    import logging

    try:
        import uvicorn

        from meshcert.serve.app import build_app
    except ImportError as exc:
        typer.echo(f"error: meshcert serve needs the `serve` extra ({exc.name} is missing): "
                   "pip install 'meshcert[serve]'", err=True)
        raise typer.Exit(Exit.USAGE) from None
    from meshcert.serve.config import load_config
    from meshcert.serve.service import open_service

    level = log_level.upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR"):
        raise typer.BadParameter(f"{log_level!r} is not a log level", param_hint="--log-level")
    settings = load_config(config)
    service = open_service(settings)
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if level != "DEBUG":  # one line per Hub request is noise; the service logs what it did
        for name in ("httpx", "httpx2", "huggingface_hub"):
            logging.getLogger(name).setLevel(logging.WARNING)
    # no access log: a webhook URL may carry ?secret=, and uvicorn would write it down
    uvicorn.run(build_app(service), host=host, port=port, access_log=False,
                log_level=log_level.lower(),
                timeout_graceful_shutdown=int(settings.budgets.drain_s) + 1)
