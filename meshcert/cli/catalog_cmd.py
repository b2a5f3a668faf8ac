"""`meshcert catalog certify`: one pinned verdict for every package a catalog lists."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from meshcert.cli.exit_codes import EXIT_CODES, Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.report_options import NO_OUTPUTS, ReportOutputs, report_outputs
from meshcert.cli.shared_options import StrictOpt, json_option

if TYPE_CHECKING:
    from meshcert.attest.catalog_trust import CatalogTrust
    from meshcert.catalog.report import CatalogOptions
    from meshcert.catalog.run import CatalogRun
    from meshcert.catalog.since import Previous
    from meshcert.catalog.sources import CatalogSource

app = typer.Typer(help="Catalog commands: certify every package a catalog lists.",
                  no_args_is_help=True, rich_markup_mode=None)

USAGE = Exit.USAGE


class ProgressLines:
    """One line per package on stderr: counts, its verdict and the time left (a plain line
    reads the same on a terminal and in a CI log)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self._stream = stream
        self._started = time.monotonic()
        self._lock = threading.Lock()

    def _write(self, line: str) -> None:
        stream = self._stream or sys.stderr
        with self._lock:
            stream.write(line + "\n")
            stream.flush()

    def planned(self, total: int) -> None:
        self._started = time.monotonic()
        self._write(f"certifying {total} package(s)")

    def finished(self, repo: str, revision: str | None, status: str, done: int, total: int
                 ) -> None:
        spent = time.monotonic() - self._started
        left = spent / done * (total - done) if done else 0.0
        eta = f"eta {left:.0f} s" if done < total else f"done in {spent:.1f} s"
        ref = f"hf://{repo}@{revision[:12]}" if revision else f"hf://{repo}"
        self._write(f"[{done}/{total}] {ref}: package {status} ({eta})")


def _fail(message: str, status: int = USAGE) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(status)


# Required, with no default: a catalog on the Hub is read over the network, so it is named by
# the user (offline, a default once meant 20 s of retries before a failure nobody asked for).
CatalogArg = Annotated[str, typer.Argument(
    help="hf://datasets/ns/name[@rev] (mesh-llm's: hf://datasets/meshllm/catalog) or a local "
    "checkout holding entries/<owner>/<repo>.json.")]
ConcurrencyOpt = Annotated[int, typer.Option(
    help="Packages certified at once (all share one cap of requests in flight).")]
RuntimeAbiOpt = Annotated[str | None, typer.Option(
    help="Check each package's ABI against this runtime ABI (X.Y.Z); also predicts "
    "mesh-llm v0.76.2's producer-ABI refusals.")]
VerifySha256Opt = Annotated[bool, typer.Option(
    "--verify-sha256/--no-verify-sha256",
    help="Stream and hash every artifact instead of trusting the Hub's LFS sha256.")]
OutDirOpt = Annotated[str | None, typer.Option(
    help="Keep every package's cert.json and cert.html here, with catalog.json and "
    "catalog.html.")]
SinceOpt = Annotated[str | None, typer.Option(
    metavar="REPORT.json", help="A previous catalog report: certify again only the "
    "packages whose commit changed.")]
WritePinsOpt = Annotated[str | None, typer.Option(
    metavar="DIR", help="Write the entries with each passed package's commit pinned as "
    "\"revision\" under DIR (the catalog itself is never touched).")]
CatalogReportOutOpt = Annotated[str | None, typer.Option(
    "--report-out", help="Write the catalog report JSON here.")]
CatalogJsonOpt = Annotated[bool, json_option("Print the catalog report JSON.")]
CatalogQuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="No progress or summary: only errors, on stderr.")]
TrustOpt = Annotated[str | None, typer.Option(
    "--trust", metavar="trust.toml", help="Verify each package's signed attestation "
    "(attestations/meshcert.intoto.jsonl) under this trust policy: mode warn reports a "
    "missing or bad one as a warning, enforce as an error.")]
TrustAttestedOpt = Annotated[bool, typer.Option(
    "--trust-attested", help="With --trust: accept a package whose valid, trusted PASSED "
    "attestation matches the commit's listing without certifying it again (no header "
    "read; 3 Hub requests).")]
AttestationRepoOpt = Annotated[str | None, typer.Option(
    "--attestation-repo", metavar="DATASET", help="With --trust-attested: read each "
    "package's attestation from this dataset, at <ns>/<repo>/<commit>.intoto.jsonl (where "
    "`meshcert serve` uploads it), not from the package repo.")]


@app.command("certify")
@report_outputs
def certify(
    catalog: CatalogArg,
    concurrency: ConcurrencyOpt = 4,
    runtime_abi: RuntimeAbiOpt = None,
    strict: StrictOpt = False,
    verify_sha256: VerifySha256Opt = False,
    out_dir: OutDirOpt = None,
    since: SinceOpt = None,
    write_pins: WritePinsOpt = None,
    report_out: CatalogReportOutOpt = None,
    json_out: CatalogJsonOpt = False,
    quiet: CatalogQuietOpt = False,
    trust: TrustOpt = None,
    trust_attested: TrustAttestedOpt = False,
    attestation_repo: AttestationRepoOpt = None,
    outputs: ReportOutputs = NO_OUTPUTS,
) -> None:
    """Certify every layer-package reference of a catalog; exit 0 all passed, 1 any failed,
    2 usage error, 3 any incomplete (the Hub unreachable for some)."""
    from meshcert.catalog.report import CatalogOptions
    from meshcert.catalog.run import CatalogRequest, certify_catalog, check_catalog_options

    with option_errors():
        check_catalog_options(concurrency, runtime_abi)
    options = CatalogOptions(runtime_abi=runtime_abi, strict=strict, verify_sha256=verify_sha256)
    source, previous, root = _open(catalog, since, options, write_pins)
    progress = None if (quiet or json_out) else ProgressLines()
    on_certified = None
    if out_dir is not None:
        from meshcert.reports.catalog.outputs import PackageReportWriter

        on_certified = PackageReportWriter(out_dir)
    request = CatalogRequest(options=options, concurrency=concurrency, previous=previous,
                             keep_reports=out_dir is not None,
                             attestation=_catalog_trust(trust, trust_attested,
                                                        attestation_repo))
    from meshcert.cli.console import hub_retry_lines

    try:
        with hub_retry_lines(progress is not None):
            run = certify_catalog(source, request, progress=progress,
                                  on_certified=on_certified)
    except KeyboardInterrupt:
        raise _fail("interrupted: no catalog report written", Exit.INCOMPLETE) from None
    except OSError as exc:  # a cert file under --out-dir could not be written
        raise _fail(f"cannot write {exc.filename or 'a report'}: {exc.strerror or exc}",
                    Exit.INCOMPLETE) from None
    _deliver(run, out_dir=out_dir, since=since, write_pins=write_pins, root=root,
             report_out=report_out, json_out=json_out, quiet=quiet, outputs=outputs)


def _open(catalog: str, since: str | None, options: CatalogOptions, write_pins: str | None
          ) -> tuple[CatalogSource, Previous | None, str | None]:
    """The catalog, the previous report (--since) and the local checkout's root (None on the
    Hub), the --write-pins target checked against it; a usage error when one is unusable."""
    from meshcert.catalog.pins import check_target
    from meshcert.catalog.since import Previous, load_previous
    from meshcert.catalog.sources import LocalCatalog, open_catalog

    source = open_catalog(catalog)
    previous = Previous.of(load_previous(since), since, options) if since else None
    root = str(source.root) if isinstance(source, LocalCatalog) else None
    if write_pins is not None:
        check_target(write_pins, root)
    return source, previous, root


def _catalog_trust(trust: str | None, trust_attested: bool,
                   attestation_repo: str | None = None) -> CatalogTrust | None:
    from meshcert.catalog.run import check_attestation_options

    with option_errors():
        check_attestation_options(trust, trust_attested, attestation_repo)
    if trust is None:
        return None
    from meshcert.attest.catalog_trust import CatalogTrust
    from meshcert.cli.attest_cmd import load_policy

    return CatalogTrust(load_policy(trust, None), trust_attested=trust_attested,
                        attestation_repo=attestation_repo)


def _deliver(run: CatalogRun, *, out_dir: str | None, since: str | None, write_pins: str | None,
             root: str | None, report_out: str | None, json_out: bool, quiet: bool,
             outputs: ReportOutputs) -> None:
    from meshcert.catalog.pins import PinError, plan_pins
    from meshcert.catalog.pins import write_pins as write_pin_files
    from meshcert.reports.catalog.outputs import carry_reused, write_catalog_reports

    report = run.report
    try:
        if since is not None:
            carry_reused(report, since, out_dir)
        written = write_catalog_reports(report, out_dir=out_dir, report_out=report_out,
                                        **outputs)
        plan = None
        pin_files: list[object] = []
        if write_pins is not None:
            plan = plan_pins(run.snapshot.files, run.references, report.packages)
            pin_files = list(write_pin_files(plan, write_pins, root))
    except (OSError, PinError) as exc:  # the verdict cannot be delivered: never claim success
        where = getattr(exc, "filename", None) or "a report"
        detail = getattr(exc, "strerror", None) or exc
        raise _fail(f"cannot write {where}: {detail}", Exit.INCOMPLETE) from None
    if json_out:
        from meshcert.cli.pipe import write_or_drop

        write_or_drop(sys.stdout, report.to_json())
    elif not quiet:
        _summary(run, written)
        if plan is not None:
            typer.echo(f"pins: {len(plan.pinned)} reference(s) pinned in {len(pin_files)} "
                       f"entr{'y' if len(pin_files) == 1 else 'ies'} under {write_pins}")
            for row, why in plan.left:
                typer.echo(f"  {row.entry} {row.variant} hf://{row.repo}: {why}")
    raise typer.Exit(EXIT_CODES[report.status])


def _summary(run: CatalogRun, written: Sequence[tuple[str, object]]) -> None:
    report = run.report
    c = report.counts
    catalog = report.catalog
    at = f"@{catalog.revision}" if catalog.revision else ""
    typer.echo(f"{report.status.upper()}: {c.packages} package(s) in {catalog.location}{at}: "
               f"{c.passed} passed, {c.failed} failed, {c.incomplete} incomplete; mesh-llm "
               f"would refuse {c.mesh_llm_refuses}; {c.unpinned} not pinned by their entry; "
               f"{c.requests} Hub requests")
    for f in report.findings:
        typer.echo(f"  {f.code}: {f.message}")
    for row in report.packages:
        ref = f"hf://{row.repo}@{row.revision[:12]}" if row.revision else f"hf://{row.repo}"
        if row.attested_only:
            typer.echo(f"  {row.status:<10} {row.entry} {row.variant} {ref}: verified by "
                       f"attestation, signer {row.attested}")
            continue
        if row.status == "passed" and not row.findings:
            continue
        codes = ", ".join(row.error_codes + row.warning_codes)
        typer.echo(f"  {row.status:<10} {row.entry} {row.variant} {ref}: {codes}")
        if row.certification is not None and row.certification.verdict:
            typer.echo(f"             {row.certification.verdict}")  # as models certify says
    if report.since is not None:
        s = report.since
        typer.echo(f"since {s.report}: {s.new} new, {s.changed} with a new commit, "
                   f"{s.unchanged} unchanged, {s.retried} certified again, {len(s.removed)} "
                   "removed")
    for kind, path in written:
        typer.echo(f"{kind}: {path}")


@app.command("recheck")
def recheck(
    mesh_llm: Annotated[str, typer.Option("--mesh-llm", metavar="X.Y.Z", help="The mesh-llm "
                                          "release every package must load on.")],
    catalog: CatalogArg,
    runtime_abi: RuntimeAbiOpt = None,
    matrix: Annotated[str, typer.Option("--matrix", metavar="FILE", help="The release matrix "
                                        "to add this release to (JSON; a Markdown table is "
                                        "written beside it).")] = "release-matrix.json",
    open_discussions: Annotated[bool, typer.Option(
        "--open-discussions", help="Open one discussion on the repo of each package the "
        "release refuses (never two; needs HF_TOKEN).")] = False,
    concurrency: ConcurrencyOpt = 4,
) -> None:
    """Certify every catalog package against one mesh-llm release and add it to the release
    matrix (package x release: loads, or refused with the codes); exit 0 all load, 1 any
    refused, 2 usage error, 3 any unknown (the Hub unreachable for some)."""
    from meshcert.catalog.run import check_catalog_options
    from meshcert.core.usage import release
    from meshcert.serve import release_matrix as rm

    with option_errors():
        check_catalog_options(concurrency, runtime_abi)
        release(mesh_llm, "--mesh-llm")
    try:
        table = rm.load_matrix(matrix)
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--matrix") from None
    result = rm.recheck_catalog(catalog, mesh_llm, runtime_abi, concurrency=concurrency)
    if open_discussions:
        from meshcert.serve.hub_side import ServeHub

        rm.open_discussions(result, ServeHub())
    markdown = rm.write_matrix(matrix, rm.add_release(table, result, catalog))
    for cell in result.cells:
        codes = f" ({', '.join(cell.codes)})" if cell.codes else ""
        typer.echo(f"{cell.verdict:<8} {cell.package}{codes}")
    for repo in result.opened:
        typer.echo(f"discussion opened on {repo}")
    typer.echo(f"release matrix: {matrix}, {markdown}")
    if any(c.verdict == "unknown" for c in result.cells):
        raise typer.Exit(Exit.INCOMPLETE)
    raise typer.Exit(Exit.FAILED if result.refused else Exit.PASSED)
