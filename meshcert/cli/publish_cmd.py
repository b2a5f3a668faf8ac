"""`meshcert package publish DIR --target ns/repo`: upload a certified package, pin it, certify
it on the Hub, list it in a catalog. Exit 0 published and certified, 1 failed, 2 refused or a
usage error (nothing uploaded), 3 incomplete (a re-run resumes)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from meshcert.cli.exit_codes import Exit
from meshcert.cli.shared_options import (
    CatalogTargetOpt,
    catalog_target,
    quiet_option,
)

if TYPE_CHECKING:
    from meshcert.publish.requests import PublishResult, SignPublished

EXIT_CODES = {"published": Exit.PASSED, "failed": Exit.FAILED, "refused": Exit.REFUSED,
              "incomplete": Exit.INCOMPLETE}


def quiet_hub_logs() -> None:
    """huggingface_hub logs every retried HTTP error as a warning on stderr; the publisher
    retries and reports the outcome itself, so only its errors are let through."""
    from meshcert.core.hub.progress import quiet_client_logs

    quiet_client_logs()


def hub_bars_only_on_a_terminal(quiet: bool) -> None:
    """huggingface_hub draws a tqdm bar per upload, redrawn with cursor escapes: on a terminal
    that is progress, in a CI log or a pipe it is ~130 lines of noise. Off there (and with
    --quiet), through the library's public switch; the publisher's own lines (one per commit
    and per artifact uploaded) say what was sent."""
    from meshcert.cli.terminal import plain_stream

    if quiet or plain_stream(sys.stderr):
        from meshcert.core.hub.progress import hide_client_bars

        hide_client_bars()


def publish(
    directory: Annotated[str, typer.Argument(metavar="DIR", help="The package directory.")],
    target: Annotated[str, typer.Option("--target", metavar="NS/REPO",
                                        help="The model repo to publish to.")],
    private: Annotated[bool, typer.Option("--private", help="Create the repo private.")] = False,
    branch: Annotated[str | None, typer.Option(
        "--branch", metavar="B", help="Publish to this branch (created from main).")] = None,
    create_pr: Annotated[bool, typer.Option(
        "--create-pr", help="Publish as a pull request on the target.")] = False,
    experimental: Annotated[bool, typer.Option(
        "--experimental", help="Mark the package experimental; its catalog entry is proposed "
        "as a pull request.")] = False,
    catalog: CatalogTargetOpt = None,
    commit_message: Annotated[str | None, typer.Option(
        "--commit-message", help="Summary of the commits.")] = None,
    max_files_per_commit: Annotated[int, typer.Option(
        help="Artifacts per commit (the Hub recommends fewer than 100).")] = 50,
    max_bytes_per_commit: Annotated[int, typer.Option(
        help="Artifact bytes per commit.")] = 16 * 1024**3,
    verify_cache: Annotated[str | None, typer.Option(
        help="Digest cache of the local certification, reused.")] = None,
    quiet: Annotated[bool, quiet_option("No progress lines.")] = False,
    attest_key: Annotated[str | None, typer.Option(
        "--attest-key", metavar="NAME.key", help="Sign the published commit's passed "
        "certification and commit it as attestations/meshcert.intoto.jsonl "
        "(docs/attestation.md).")] = None,
) -> None:
    """Publish DIR to the Hub over LFS, pinned and certified."""
    from meshcert.publish.requests import PublishRequest
    from meshcert.publish.service import publish_package, refusal

    request = PublishRequest(
        package_dir=directory, target=target, private=private, branch=branch,
        create_pr=create_pr, experimental=experimental, catalog=catalog_target(catalog),
        commit_message=commit_message, max_files_per_commit=max_files_per_commit,
        max_bytes_per_commit=max_bytes_per_commit, verify_cache=verify_cache,
        sign=attest_signer(attest_key))
    problem = refusal(request)
    if problem is not None:
        raise typer.BadParameter(problem)

    def progress(message: str) -> None:
        if not quiet:
            typer.echo(message, err=True)

    quiet_hub_logs()
    hub_bars_only_on_a_terminal(quiet)
    from meshcert.cli.console import hub_retry_lines

    with hub_retry_lines(not quiet):
        result = publish_package(request, progress=progress)
    print_result(result)
    raise typer.Exit(EXIT_CODES[result.status])


def attest_signer(attest_key: str | None) -> SignPublished | None:
    """--attest-key: the signer the publisher calls (the key read now, on this machine)."""
    if attest_key is None:
        return None
    from meshcert.cli.attest_cmd import load_signing_key
    from meshcert.cli.attest_sign import publish_signer

    return publish_signer(load_signing_key(attest_key))


def print_result(result: PublishResult) -> None:
    if result.status == "refused":
        typer.echo(f"refused: {result.message}", err=True)
        report = result.local_report
        for item in (report.findings if report is not None else []):
            if item.severity == "error":
                typer.echo(f"  {item.code}: {item.message}", err=True)
        if report is not None:  # what refused it: the local certification, in its sentence
            from meshcert.cli.cert_console import counts_line

            typer.echo(f"  {counts_line(report)}", err=True)
        return
    counts = (f"{len(result.commits)} commit(s), {len(result.uploaded)} file(s) uploaded, "
              f"{len(result.skipped)} already there")
    if result.status == "published" and result.attestation_commit is not None:
        typer.echo(f"published, certified and signed: {result.ref}")
    elif result.status == "published":
        typer.echo(f"published and certified: {result.ref}")
    else:
        typer.echo(f"{result.status}: {result.message}", err=True)
    typer.echo(f"  {counts}")
    report = result.remote_report or result.local_report
    if report is not None:  # the one verdict sentence, as `models certify` ends
        from meshcert.cli.cert_console import counts_line

        typer.echo(f"  {counts_line(report)}")
    if result.pull_request_url:
        typer.echo(f"  pull request: {result.pull_request_url}")
    if result.catalog is not None:
        where = result.catalog.pull_request_url or f"commit {result.catalog.commit}"
        typer.echo(f"  catalog {result.catalog.repo}: {result.catalog.path}, {where} "
                   f"({result.catalog.reason})")
    if result.attestation_commit is not None:
        typer.echo(f"  attestation: attestations/meshcert.intoto.jsonl at commit "
                   f"{result.attestation_commit}, on top of the certified commit "
                   f"{result.commit} (no artifact changed)")
    elif result.attestation_note is not None:
        typer.echo(f"  {result.attestation_note}", err=True)
    if result.ref is not None:  # one ref: printed, pinned by the catalog, holding the attestation
        typer.echo(f"  immutable ref: {result.ref}")
        typer.echo(f"  run it: {result.serve_command}")
