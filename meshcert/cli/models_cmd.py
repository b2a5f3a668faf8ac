"""`meshcert models certify`: a drop-in for `mesh-llm models certify`, plus more."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from meshcert.cli.deliver import deliver
from meshcert.cli.exit_codes import Exit
from meshcert.cli.option_errors import option_errors
from meshcert.cli.report_options import NO_OUTPUTS, ReportOutputs, report_outputs
from meshcert.cli.request_of import request_of
from meshcert.cli.shared_options import (
    ReportJsonOpt,
    StrictOpt,
    quiet_option,
)

if TYPE_CHECKING:  # the engine loads inside the commands
    from collections.abc import Callable

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.certify.service import CertRequest
    from meshcert.certify.view import PackageView
    from meshcert.core.findings import Finding

app = typer.Typer(help="Model package commands.", no_args_is_help=True, rich_markup_mode=None)

# `models certify`'s options; their rules live beside the request they make
# (meshcert.certify.request_options, meshcert.hubjobs.certify_options)
ModelArg = Annotated[str, typer.Argument(help="hf://ns/repo[@rev] or a local package dir.")]
PackageOnlyOpt = Annotated[bool, typer.Option("--package-only", help="Certify the package only.")]
ApiBaseOpt = Annotated[str | None, typer.Option(
    "--api-base", help="OpenAI-compatible base URL (without /v1) to smoke-test.")]
CertReportOutOpt = Annotated[str | None, typer.Option("--report-out", help="Write cert.json here.")]
PromptOpt = Annotated[str, typer.Option(help="Prompt for the runtime gates.")]
MaxTokensOpt = Annotated[int, typer.Option(help="max_tokens for the runtime gates.")]
ServedModelOpt = Annotated[str | None, typer.Option(
    help="Model id the endpoint serves (default: MODEL as given).")]
ApiKeyOpt = Annotated[str | None, typer.Option(
    help="Bearer token for the endpoint (or MESH_LLM_API_KEY); never reported.",
    show_default=False)]
TimeoutOpt = Annotated[float, typer.Option(help="Per-request timeout, seconds.")]
ConcurrencyOpt = Annotated[int, typer.Option(help="Parallel requests for the concurrency gate.")]
DeadlineOpt = Annotated[float, typer.Option(
    help="Overall time limit for all runtime gates, seconds.")]
RuntimeAbiOpt = Annotated[str | None, typer.Option(
    help="Check skippy_abi_version against this runtime ABI (X.Y.Z).")]
MinMeshLlmOpt = Annotated[str | None, typer.Option(
    "--min-mesh-llm", metavar="VERSION",
    help="The oldest mesh-llm release the package must load on (X.Y.Z): a package that "
    "needs a newer one (publisher metadata >= 0.77.0, request defaults >= 0.78.1) is an "
    "error, not a note.")]
AllowUnpinnedOpt = Annotated[bool, typer.Option(
    help="Accept a moving hf:// revision (warning instead of error).")]
VerifySha256Opt = Annotated[bool | None, typer.Option(
    "--verify-sha256/--no-verify-sha256",
    help="Hash every artifact (default: on for local dirs; hf:// uses Hub-attested "
    "hashes unless set).")]
VerifyCacheOpt = Annotated[str | None, typer.Option(
    help="Cache file of computed digests keyed on (path, size, mtime, ctime, inode).")]
StagesOpt = Annotated[int | None, typer.Option(help="Also show the package tool's N-stage plan.")]
LayersOpt = Annotated[str | None, typer.Option(
    "--layers", metavar="A..B", help="Certify only this node's slice: layers A to B-1 "
    "(half-open); the manifest-wide checks still run.")]
StageOpt = Annotated[str | None, typer.Option(
    "--stage", metavar="I/N", help="Certify only stage I of the package tool's N-stage "
    "plan (I from 0); merge the slices with `meshcert report merge`.")]
HashOnceOpt = Annotated[bool, typer.Option(
    "--hash-once", help="With --stage I/N: hash only this stage's share of the N-stage "
    "plan, so the N slices hash each artifact once (a part several stages load, such as "
    "shared/common.gguf, is hashed by one of them; the others check its size and header). "
    "Merge all N slices with `meshcert report merge`.")]
SourceOpt = Annotated[str | None, typer.Option(
    help="Source GGUF (or first shard) to compare tensors with.")]
EvidenceOpt = Annotated[str | None, typer.Option(
    help="decisions.json from `meshcert evidence report`.")]
CertQuietOpt = Annotated[bool, quiet_option("No progress or summary: "
                                            "only the errors, on stderr.")]
MaterializeOpt = Annotated[bool, typer.Option(
    "--materialize", help="Build both certification stage GGUFs and re-open them with "
    "llama.cpp's parser.")]
MaterializeDirOpt = Annotated[str | None, typer.Option(
    help="Where materialized stages are kept (default: stages/ in the user cache dir, "
    "~/.cache/meshcert/stages on Linux, ~/Library/Caches/meshcert/stages on macOS).")]
ParityOpt = Annotated[str | None, typer.Option(
    "--parity", help="Source GGUF: reassemble the model from the package and compare "
    "greedy tokens and logits under llama.cpp.")]
ParityPromptsOpt = Annotated[str | None, typer.Option(
    help="Prompts for --parity, one per line (default: three built-in prompts).")]
ParityTokensOpt = Annotated[int, typer.Option(help="Greedy tokens per prompt.")]
ParityMaxBytesOpt = Annotated[int, typer.Option(
    help="Refuse --parity for models larger than this.")]
HfJobOpt = Annotated[bool, typer.Option(
    "--hf-job", help="Certify an hf:// package on Hugging Face Jobs: --stages N jobs, each "
    "hashing its slice next to the storage, merged into one report. A dry run (the plan "
    "and its maximum cost) unless --confirm.")]
ConfirmOpt = Annotated[bool, typer.Option(
    "--confirm", help="--hf-job: submit the jobs (this spends money).")]
FollowOpt = Annotated[bool, typer.Option(
    "--follow", help="--hf-job: stream the jobs' logs to stderr while they run.")]
MaxCostOpt = Annotated[float | None, typer.Option(
    help="--hf-job: refuse a plan whose maximum cost is above this.")]
FlavorOpt = Annotated[str, typer.Option(
    help="--hf-job: a flavor of the Hub's hardware list, or auto (the cheapest that fits).")]
InstallOpt = Annotated[str | None, typer.Option(
    help="--hf-job: what a job pip-installs (default meshcert==<this version>).")]
MountedFromOpt = Annotated[str | None, typer.Option(
    help="The local MODEL directory is this hf://ns/repo@<commit> mounted read-only (an "
    "HF Jobs volume): files are hashed here, the report names the Hub ref.")]
LlamaTimeoutOpt = Annotated[float, typer.Option(
    help="Wall clock in seconds of each llama.cpp worker (--materialize's re-open, "
    "--parity's load and decode of each model); one that outlives it is llama_cpp_crashed.")]
AttestKeyOpt = Annotated[str | None, typer.Option(
    "--attest-key", metavar="NAME.key", help="Sign a passed or failed certification of "
    "the whole package (in-toto/VSA in DSSE, Ed25519; docs/attestation.md).")]
AttestationOutOpt = Annotated[str | None, typer.Option(
    "--attestation-out", metavar="PATH", help="--attest-key: write the attestation here "
    "(default: <report stem>.intoto.jsonl beside --report-out).")]
TrustOpt = Annotated[str | None, typer.Option(
    "--trust", metavar="trust.toml", help="Verify the package's signed attestation "
    "under this trust policy: mode warn reports a missing or bad one as a warning, "
    "enforce as an error.")]
AttestationOpt = Annotated[str | None, typer.Option(
    "--attestation", metavar="FILE", help="--trust: the attestation to verify (default: "
    "attestations/meshcert.intoto.jsonl in the package).")]


@app.command("certify")
@report_outputs
def certify(
    model: ModelArg,
    package_only: PackageOnlyOpt = False,
    api_base: ApiBaseOpt = None,
    report_out: CertReportOutOpt = None,
    json_out: ReportJsonOpt = False,
    prompt: PromptOpt = "Say ok.",
    max_tokens: MaxTokensOpt = 2,
    served_model: ServedModelOpt = None,
    api_key: ApiKeyOpt = None,
    timeout: TimeoutOpt = 120.0,
    concurrency: ConcurrencyOpt = 4,
    strict: StrictOpt = False,
    deadline: DeadlineOpt = 600.0,
    runtime_abi: RuntimeAbiOpt = None,
    min_mesh_llm: MinMeshLlmOpt = None,
    allow_unpinned: AllowUnpinnedOpt = False,
    verify_sha256: VerifySha256Opt = None,
    verify_cache: VerifyCacheOpt = None,
    stages: StagesOpt = None,
    layers: LayersOpt = None,
    stage: StageOpt = None,
    hash_once: HashOnceOpt = False,
    source: SourceOpt = None,
    evidence: EvidenceOpt = None,
    quiet: CertQuietOpt = False,
    materialize: MaterializeOpt = False,
    materialize_dir: MaterializeDirOpt = None,
    parity: ParityOpt = None,
    parity_prompts: ParityPromptsOpt = None,
    parity_tokens: ParityTokensOpt = 16,
    parity_max_bytes: ParityMaxBytesOpt = 8 << 30,
    hf_job: HfJobOpt = False,
    confirm: ConfirmOpt = False,
    follow: FollowOpt = False,
    max_cost_usd: MaxCostOpt = None,
    flavor: FlavorOpt = "auto",
    install: InstallOpt = None,
    mounted_from: MountedFromOpt = None,
    llama_timeout: LlamaTimeoutOpt = 600.0,
    attest_key: AttestKeyOpt = None,
    attestation_out: AttestationOutOpt = None,
    trust: TrustOpt = None,
    attestation: AttestationOpt = None,
    outputs: ReportOutputs = NO_OUTPUTS,
) -> None:
    """Certify a layer package; exit 0 passed, 1 failed, 2 usage error, 3 incomplete."""
    params = dict(locals())  # the options, by name: the requests' fields
    from meshcert.certify.request_options import CertifyInput, cert_request, check_values
    from meshcert.hubjobs import certify_options as on_jobs

    given = request_of(CertifyInput, params)
    jobs = request_of(on_jobs.CertifyJobsOptions, params)
    with option_errors():
        check_values(given)
        signing = _signing(attest_key, attestation_out, report_out)
        if hf_job:
            on_jobs.check_on_jobs(given, jobs)
    if hf_job:
        from meshcert.cli.hf_job_cmd import certify_on_hf_jobs

        certify_on_hf_jobs(given, jobs, report_out=report_out, json_out=json_out, quiet=quiet,
                           outputs=outputs, signing=signing)
    with option_errors():
        on_jobs.check_without_jobs(jobs)
        request = replace(cert_request(given), extra_findings=_trust_gate(trust, attestation))
    _certify_and_deliver(request, signing, report_out=report_out, json_out=json_out,
                         quiet=quiet, outputs=outputs)


def _certify_and_deliver(request: CertRequest, signing: tuple[Ed25519PrivateKey, str] | None,
                         *, report_out: str | None, json_out: bool, quiet: bool,
                         outputs: ReportOutputs) -> NoReturn:
    from meshcert.certify.service import certify_package
    from meshcert.cli.console import RichProgress, hub_retry_lines
    from meshcert.core.progress import NullProgress, ProgressObserver

    progress: ProgressObserver = NullProgress() if (quiet or json_out) else RichProgress()
    if signing is not None:  # sign only digests hashed in this run (docs/attestation.md)
        request = replace(request, verify_cache_lookups=False)
        if request.verify_cache is not None and not quiet:
            typer.echo("attestation: --verify-cache is written, not read: a signed "
                       "certification hashes every artifact in this run", err=True)
    try:
        with hub_retry_lines(not (quiet or json_out)):
            report = certify_package(request, progress)
    except KeyboardInterrupt:
        typer.echo("interrupted: no report written", err=True)
        raise typer.Exit(Exit.INCOMPLETE) from None
    if signing is not None:
        from meshcert.attest.statement import VerdictOptions
        from meshcert.cli.attest_sign import sign_certification

        verdict = VerdictOptions(strict=request.options.strict,
                                 source=request.source_gguf is not None,
                                 parity=request.parity is not None,
                                 materialize=request.materialize)
        report = sign_certification(report, signing[0], signing[1], options=verdict,
                                    quiet=quiet)
    deliver(report, report_out=report_out, json_out=json_out, quiet=quiet, outputs=outputs)


def _signing(attest_key: str | None, attestation_out: str | None, report_out: str | None
             ) -> tuple[Ed25519PrivateKey, str] | None:
    """--attest-key: the key (read now: a bad key is a usage error before any work) and where
    the attestation goes."""
    if attest_key is None:
        if attestation_out is not None:
            raise typer.BadParameter("needs --attest-key", param_hint="--attestation-out")
        return None
    from meshcert.cli.attest_cmd import load_signing_key
    from meshcert.cli.attest_sign import attestation_target

    return load_signing_key(attest_key), attestation_target(report_out, attestation_out)


def _trust_gate(trust: str | None, attestation: str | None
                ) -> Callable[[PackageView], list[Finding]] | None:
    if trust is None:
        if attestation is not None:
            raise typer.BadParameter("needs --trust", param_hint="--attestation")
        return None
    from meshcert.attest.policy_check import trust_gate
    from meshcert.cli.attest_cmd import load_trust_option

    policy = load_trust_option(trust)
    return trust_gate(policy, attestation) if policy is not None else None


# --- `models inspect`: one GGUF file, not a package -------------------------------------------
@app.command("inspect")
@report_outputs
def inspect(
    path: Annotated[str, typer.Argument(
        metavar="PATH.gguf", help="A GGUF file, or the first shard of a split set "
        "(*-00001-of-0000N.gguf).")],
    report_out: Annotated[str | None, typer.Option("--report-out",
                                                   help="Write the report JSON here.")] = None,
    json_out: ReportJsonOpt = False,
    quiet: Annotated[bool, quiet_option("No summary.")] = False,
    outputs: ReportOutputs = NO_OUTPUTS,
) -> None:
    """Audit one GGUF with the checks that apply to a single file, and llama.cpp's own
    parser; exit 0 no error findings, 1 error findings, 2 usage error, 3 incomplete."""
    from meshcert.certify.inspect_file import inspect_gguf

    if not os.path.isfile(path):
        raise typer.BadParameter(f"{path!r} is not a file", param_hint="PATH.gguf")
    deliver(inspect_gguf(path), report_out=report_out, json_out=json_out, quiet=quiet,
            outputs=outputs, inspect=True)
