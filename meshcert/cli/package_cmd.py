"""`meshcert package write` and `meshcert package plan`: make a layer package, certified
(`package publish` lives in meshcert/cli/publish_cmd.py).

Exit statuses of `write`: 0 written and certified passed; 1 written but
certification failed; 2 refused (usage, bad or hostile input, existing manifest, missing
sibling, no disk: nothing written or changed) or aborted by the hook (no manifest); 3
certification incomplete; 130 interrupted (no manifest; `--resume` continues).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from meshcert.cli.cert_console import counts_line
from meshcert.cli.deliver import undeliverable
from meshcert.cli.exit_codes import EXIT_CODES, Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.package_console import LineProgress, publisher_lines
from meshcert.cli.report_options import NO_OUTPUTS, ReportOutputs, report_outputs
from meshcert.cli.shared_options import (
    CatalogTargetOpt,
    PackageFormatOpt,
    catalog_target,
    json_option,
    quiet_option,
)

if TYPE_CHECKING:
    from meshcert.certify.report import CertReport
    from meshcert.publish.requests import PublishWhileWriting
    from meshcert.writer.write import WriteRequest, WriteResult

app = typer.Typer(help="Write, plan and publish layer packages.", no_args_is_help=True,
                  rich_markup_mode=None)

EXIT_INTERRUPTED = Exit.INTERRUPTED
DEFAULT_MAX = 8 << 30
PUBLISHER_HELP = ("v2: a source publisher file copied into metadata/ and listed in "
                  "publisher_metadata (repeatable): config.json, generation_config.json, "
                  "tokenizer_config.json, chat_template.jinja or hf_quant_config.json; needs the "
                  "source repo and its 40-hex commit revision.")
NO_PUBLISHER_HELP = ("A Hub SOURCE: do not pick up the publisher files present at its "
                     "revision (by default every one of the five is).")
GENERATION_DEFAULTS_HELP = ("v2: a GenerationRequestDefaults JSON file, validated, written as "
                            "generation.request_defaults (an inferred MTP declaration is "
                            "kept beside it).")


# the options `package write` and `package plan` share
MaxArtifactBytesOpt = Annotated[int, typer.Option(
    help="v2: cut a group larger than this into -partNN files.")]
SourceRepoOpt = Annotated[str | None, typer.Option(
    help="Source repo recorded in source_model.repo.")]
SourceRevisionOpt = Annotated[str | None, typer.Option(
    help="Source revision recorded in source_model.revision.")]
PublisherMetadataOpt = Annotated[list[str] | None, typer.Option(
    "--publisher-metadata", metavar="FILE", help=PUBLISHER_HELP)]
NoPublisherMetadataOpt = Annotated[bool, typer.Option(
    "--no-publisher-metadata", help=NO_PUBLISHER_HELP)]
GenerationDefaultsOpt = Annotated[str | None, typer.Option(
    "--generation-defaults", metavar="FILE", help=GENERATION_DEFAULTS_HELP)]
# `package write`'s own
SourceArg = Annotated[str, typer.Argument(
    metavar="SOURCE", help="A GGUF file, the first shard of a split set "
    "(*-00001-of-0000N.gguf), org/repo[@rev]:QUANT or hf://org/repo@rev/path.gguf.")]
OutDirOpt = Annotated[str, typer.Option("--out-dir", help="Where the package is written.")]
ModelIdOpt = Annotated[str | None, typer.Option(
    help="Model coordinate for the manifest (required for a local SOURCE).")]
SourceFileOpt = Annotated[str | None, typer.Option(
    help="Primary file name recorded in source_model.primary_file.")]
ProjectorOpt = Annotated[list[str] | None, typer.Option(
    "--projector", help="A multimodal projector GGUF (repeatable; for a Hub SOURCE a "
    "repo path; default there: every mmproj* file).")]
AfterArtifactOpt = Annotated[str | None, typer.Option(
    help="Shell command run after each artifact (SKIPPY_PACKAGE_ARTIFACT_PATH, "
    "SKIPPY_PACKAGE_ARTIFACT_RELATIVE_PATH); a non-zero exit aborts.")]
ResumeOpt = Annotated[bool, typer.Option(
    "--resume", help="Continue into an out-dir with artifacts: re-verify each one, "
    "rewrite any that fails.")]
WriteReportOutOpt = Annotated[str | None, typer.Option(
    "--report-out", help="Write the package's cert.json here.")]
WriteJsonOpt = Annotated[bool, json_option("Print cert.json on stdout.")]
WriteQuietOpt = Annotated[bool, quiet_option("No progress or summary.")]
PublishOpt = Annotated[str | None, typer.Option(
    "--publish", metavar="NS/REPO", help="Upload each artifact to this model repo as soon "
    "as it is written and verified; the manifest last; then certify the published commit.")]
DeleteAfterUploadOpt = Annotated[bool, typer.Option(
    "--delete-after-upload", help="--publish: remove each artifact once uploaded, so "
    "the disk needed is a few artifacts, not the package.")]
PrivateOpt = Annotated[bool, typer.Option("--private", help="--publish: create the repo private.")]
ExperimentalOpt = Annotated[bool, typer.Option(
    "--experimental", help="--publish: mark it experimental; the catalog entry is a "
    "pull request.")]
WriteAttestKeyOpt = Annotated[str | None, typer.Option(
    "--attest-key", metavar="NAME.key", help="--publish: sign the published commit's "
    "passed certification and commit it as attestations/meshcert.intoto.jsonl.")]


def _fail(code: int, text: str) -> typer.Exit:
    typer.echo(text, err=True)
    return typer.Exit(code)


@contextlib.contextmanager
def _write_errors(after_abort: str | None = None, after_interrupt: str | None = None
                  ) -> Iterator[None]:
    """The writer's refusals (with their code) exit 2; with what is left after each given, its
    aborts 2 and an interrupt 130: each said in one line (the others pass on unchanged)."""
    from meshcert.core.errors import Refused
    from meshcert.writer.errors import Aborted, Interrupted

    try:
        yield
    except (Refused, Aborted, Interrupted, KeyboardInterrupt) as err:
        if isinstance(err, Refused):
            raise _fail(err.exit_status, f"refused ({err.code}): {err.message}") from None
        if isinstance(err, Aborted) and after_abort is not None:
            raise _fail(err.exit_status, f"aborted ({err.code}): {err.message}; {after_abort}"
                        ) from None
        if not isinstance(err, Aborted) and after_interrupt is not None:
            raise _fail(EXIT_INTERRUPTED, f"interrupted: {after_interrupt}; run again with "
                        "--resume to continue") from None
        raise


@app.command("write")
@report_outputs
def write(
    source: SourceArg,
    out_dir: OutDirOpt,
    model_id: ModelIdOpt = None,
    source_repo: SourceRepoOpt = None,
    source_revision: SourceRevisionOpt = None,
    source_file: SourceFileOpt = None,
    projector: ProjectorOpt = None,
    after_artifact_command: AfterArtifactOpt = None,
    fmt: PackageFormatOpt = "v2",
    max_artifact_bytes: MaxArtifactBytesOpt = DEFAULT_MAX,
    publisher_metadata: PublisherMetadataOpt = None,
    no_publisher_metadata: NoPublisherMetadataOpt = False,
    generation_defaults: GenerationDefaultsOpt = None,
    resume: ResumeOpt = False,
    report_out: WriteReportOutOpt = None,
    json_out: WriteJsonOpt = False,
    quiet: WriteQuietOpt = False,
    outputs: ReportOutputs = NO_OUTPUTS,
    publish: PublishOpt = None,
    delete_after_upload: DeleteAfterUploadOpt = False,
    private: PrivateOpt = False,
    catalog: CatalogTargetOpt = None,
    experimental: ExperimentalOpt = False,
    attest_key: WriteAttestKeyOpt = None,
) -> None:
    """Split SOURCE into a layer package, verify it, certify it; exit 0 passed, 1 failed,
    2 refused, 3 incomplete, 130 interrupted. With --publish, the same statuses for the
    published package."""
    from meshcert.publish.requests import PublishWhileWriting
    from meshcert.writer.write import WriteRequest
    from meshcert.writer.write_options import check_write_options

    with option_errors():
        request = WriteRequest(
            source=source, out_dir=out_dir, fmt=check_write_options(fmt, max_artifact_bytes),
            model_id=model_id, source_repo=source_repo, source_revision=source_revision,
            source_file=source_file, projectors=list(projector or []),
            after_artifact_command=after_artifact_command,
            max_artifact_bytes=max_artifact_bytes, resume=resume,
            publisher_metadata=list(publisher_metadata or []),
            pick_up_publisher_metadata=not no_publisher_metadata,
            generation_defaults=generation_defaults,
            report_files=[p for p in (report_out, *outputs.values()) if p])
        publishing = PublishWhileWriting(
            publish, delete_after_upload=delete_after_upload, private=private,
            catalog=catalog_target(catalog), experimental=experimental, attest_key=attest_key)
    from meshcert.cli.console import hub_retry_lines

    progress = None if (quiet or json_out) else LineProgress()
    files = ReportFiles(report_out, outputs)
    with hub_retry_lines(progress is not None):
        if publish is not None:
            _write_and_publish(request, publish, publishing, progress=progress,
                               outputs=files, json_out=json_out, quiet=quiet)
        with option_errors():
            publishing.check()
        _write_and_certify(request, progress, files, json_out=json_out, quiet=quiet)


def _write_and_certify(request: WriteRequest, progress: LineProgress | None,
                       outputs: ReportFiles, *, json_out: bool, quiet: bool) -> NoReturn:
    from meshcert.writer.write import prepare
    from meshcert.writer.write import write as write_package

    started = time.monotonic()
    prepared = None
    try:
        with _write_errors("the artifacts written so far are kept (--resume re-verifies "
                           "them)", "no manifest written"):
            prepared = prepare(request)
            result = write_package(prepared, progress)
    finally:
        if prepared is not None:
            prepared.source.close()
    seconds = time.monotonic() - started
    _certify_and_deliver(result, seconds, progress, outputs, json_out, quiet)


def _write_and_publish(request: WriteRequest, target: str, publishing: PublishWhileWriting, *,
                       progress: LineProgress | None, outputs: ReportFiles, json_out: bool,
                       quiet: bool) -> NoReturn:
    from meshcert.cli.publish_cmd import EXIT_CODES as PUBLISH_EXIT
    from meshcert.cli.publish_cmd import (
        attest_signer,
        hub_bars_only_on_a_terminal,
        print_result,
        quiet_hub_logs,
    )
    from meshcert.publish.requests import PublishRequest
    from meshcert.publish.write_and_publish import write_and_publish
    publish = PublishRequest(package_dir=request.out_dir, target=target,
                             private=publishing.private, experimental=publishing.experimental,
                             catalog=publishing.catalog, sign=attest_signer(publishing.attest_key))

    def say(message: str) -> None:
        if not (quiet or json_out):
            typer.echo(message, err=True)

    quiet_hub_logs()
    hub_bars_only_on_a_terminal(quiet or json_out)
    with _write_errors("no manifest was published (--resume continues)",
                       "no manifest was published"):
        outcome = write_and_publish(request, publish,
                                    delete_after_upload=publishing.delete_after_upload,
                                    progress=progress, say=say)
    result = outcome.publish
    report = result.remote_report or outcome.local_report
    if report is not None:
        outputs.write(report)
    if json_out:
        from meshcert.cli.pipe import write_or_drop

        if report is not None:
            write_or_drop(sys.stdout, report.to_json())
        if result.status != "published":
            typer.echo(f"{result.status}: {result.message}", err=True)
    elif not quiet:
        print_result(result)  # ends with the certification's verdict sentence
    elif result.status != "published":
        typer.echo(f"{result.status}: {result.message}", err=True)
    raise typer.Exit(PUBLISH_EXIT[result.status])


def _certify_and_deliver(result: WriteResult, seconds: float, progress: LineProgress | None,
                         outputs: ReportFiles, json_out: bool, quiet: bool) -> NoReturn:
    from meshcert.core.progress import NullProgress
    from meshcert.writer.certify_step import certify_written

    try:
        report = certify_written(result, progress or NullProgress())
    except KeyboardInterrupt:
        raise _fail(EXIT_INTERRUPTED, "interrupted while certifying: the package is written "
                    f"({result.root}); certify it with `meshcert models certify "
                    f"{result.root} --package-only`") from None
    outputs.write(report)
    if json_out:
        from meshcert.cli.pipe import write_or_drop

        write_or_drop(sys.stdout, report.to_json())
    elif not quiet:
        total = result.plan.total_bytes
        lines = [f"wrote {len(result.state.artifacts)} artifacts ({total / 1e9:.2f} GB, "
                 f"{result.plan.format}) to {result.root} in {seconds:.1f} s "
                 f"({result.plan.source.total_bytes / max(seconds, 1e-9) / 1e9:.2f} GB/s "
                 "of source)"]
        if result.plan.format == "v2":
            lines.append(f"package_id: {result.manifest['package_id']}")
        if result.reverified:
            lines.append(f"re-verified {len(result.reverified)} existing artifact(s)")
        for path in result.rewritten:
            lines.append(f"rewritten (failed verification): {path}")
        lines.append(counts_line(report))
        for severity in ("error", "warning"):  # what the sentence counts, not hidden
            lines += [f"  {severity} {f.code}: {f.message}"
                      for f in report.findings if f.severity == severity]
        if outputs.report_out:
            lines.append(f"report: {outputs.report_out}")
        typer.echo("\n".join(lines))
    elif report.status != "passed":
        for f in report.findings:
            if f.severity == "error":
                typer.echo(f"error {f.code}: {f.message}", err=True)
    raise typer.Exit(EXIT_CODES[report.status])


@dataclass(frozen=True)
class ReportFiles:
    """Where the written package's certification goes: cert.json and the other formats."""

    report_out: str | None
    outputs: ReportOutputs  # format -> path

    def write(self, report: CertReport) -> None:
        from meshcert.core.atomic import write_atomic
        from meshcert.reports.outputs import write_reports

        try:
            if self.report_out:
                write_atomic(self.report_out, report.to_json())
            write_reports(report, **self.outputs)
        except OSError as exc:  # the verdict cannot be delivered: never claim success
            raise undeliverable(exc) from None


@app.command("plan")
def plan(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="As for `package write`.")],
    stages: Annotated[int, typer.Option(help="Nodes to split the layers over.")],
    fmt: PackageFormatOpt = "v2",
    max_artifact_bytes: MaxArtifactBytesOpt = DEFAULT_MAX,
    projector: Annotated[list[str] | None, typer.Option(
        "--projector", help="A projector GGUF (repeatable).")] = None,
    source_repo: SourceRepoOpt = None,
    source_revision: SourceRevisionOpt = None,
    publisher_metadata: PublisherMetadataOpt = None,
    no_publisher_metadata: NoPublisherMetadataOpt = False,
    generation_defaults: GenerationDefaultsOpt = None,
    json_out: Annotated[bool, json_option("Print the plan as JSON "
                                           "(docs/package-plan.schema.json).")] = False,
) -> None:
    """From the header alone: the artifacts `package write` would write and what each of
    N nodes would fetch; exit 0, or 2 when the source is refused."""
    from meshcert.certify.stages import layer_range
    from meshcert.writer.plan_report import plan_report
    from meshcert.writer.write import WriteRequest, open_source, plan_for
    from meshcert.writer.write_options import check_plan_options

    with option_errors():
        request = WriteRequest(
            source=source, out_dir=".",
            fmt=check_plan_options(fmt, stages, max_artifact_bytes),
            projectors=list(projector or []), source_repo=source_repo,
            source_revision=source_revision, max_artifact_bytes=max_artifact_bytes,
            publisher_metadata=list(publisher_metadata or []),
            pick_up_publisher_metadata=not no_publisher_metadata,
            generation_defaults=generation_defaults)
    with _write_errors():
        model = open_source(request)
        try:
            planned = plan_for(request, model)
        finally:
            model.close()
    report = plan_report(planned, stages, source=source, max_artifact_bytes=max_artifact_bytes)
    if json_out:
        from meshcert.cli.pipe import write_or_drop

        write_or_drop(sys.stdout, report.model_dump_json(indent=2) + "\n")
        return
    width = max(len(a.path) for a in report.artifacts)
    lines = [f"{report.format} package of {source}: {len(report.artifacts)} artifacts, "
             f"{report.total_bytes:,} bytes, {report.layer_count} layers"]
    lines += [f"  {a.path:<{width}}  {a.byte_size:>15,}" for a in report.artifacts]
    lines += publisher_lines(report)
    lines.append(f"{stages} stage(s), each as the flag that certifies it (`models certify "
                 "--layers A..B`: layers A to B-1, or `--stage I/N`):")
    for i, s in enumerate(report.stages):
        flag = f"--layers {layer_range(s.layer_start, s.layer_end)}"
        lines.append(f"  {s.stage_id}  {flag:<{6 + 2 * len(str(report.layer_count)) + 5}}  "
                     f"--stage {i}/{len(report.stages)}  {len(s.artifacts)} artifacts, "
                     f"{s.byte_size:,} bytes")
    typer.echo("\n".join(lines))


from meshcert.cli import job_cmd, publish_cmd  # noqa: E402  (their commands join this group)

app.command("publish")(publish_cmd.publish)
app.command("job")(job_cmd.job)
