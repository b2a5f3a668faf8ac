"""`meshcert models certify`: a drop-in for `mesh-llm models certify`, plus more."""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING, Annotated
from urllib.parse import urlparse

import typer

from meshcert.cli.deliver import deliver
from meshcert.cli.exit_codes import Exit
from meshcert.cli.shared_options import HtmlOpt, JunitOpt, MdOpt, SarifOpt, StrictOpt

if TYPE_CHECKING:  # the engine loads inside the commands
    from collections.abc import Callable

    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.certify.scope import ScopeRequest
    from meshcert.certify.split_parity import ParityRequest
    from meshcert.certify.view import PackageView
    from meshcert.core.findings import Finding

app = typer.Typer(help="Model package commands.", no_args_is_help=True, rich_markup_mode=None)

_ABI = re.compile(r"^\d+\.\d+(\.\d+)?$")


def validate_api_base(value: str) -> str:
    """http(s) URL with a host, without /v1; a trailing '/' is trimmed (as mesh-llm does)."""
    base = value.strip().rstrip("/")
    parsed = urlparse(base)
    if parsed.scheme not in {"http", "https"} or not parsed.hostname:
        raise typer.BadParameter(f"{value!r} is not an http(s) URL with a host",
                                 param_hint="--api-base")
    if parsed.path.rstrip("/").endswith("/v1"):
        raise typer.BadParameter("give the base URL without /v1", param_hint="--api-base")
    return base


def load_evidence_verdicts(path: str) -> dict[str, str]:
    """policy -> verdict from an evidence decisions.json."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise typer.BadParameter(f"cannot read evidence {path!r}: {exc}",
                                 param_hint="--evidence") from None
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        raise typer.BadParameter(f"{path!r} has no decisions[] list", param_hint="--evidence")
    return {str(d.get("policy")): str(d.get("verdict")) for d in decisions if isinstance(d, dict)}


def parse_scope(layers: str | None, stage: str | None, hash_once: bool = False
                ) -> ScopeRequest | None:
    """--layers A..B or --stage I/N (not both) -> the slice to certify."""
    from meshcert.certify.scope import parse_layers, parse_stage

    if layers is not None and stage is not None:
        raise typer.BadParameter("give --layers or --stage, not both",
                                 param_hint="--layers / --stage")
    if hash_once and stage is None:
        raise typer.BadParameter("needs --stage I/N (the share of the N-stage plan)",
                                 param_hint="--hash-once")
    try:
        if layers is not None:
            return parse_layers(layers)
        return parse_stage(stage, hash_once=hash_once) if stage is not None else None
    except ValueError as exc:
        raise typer.BadParameter(str(exc),
                                 param_hint="--layers" if layers else "--stage") from None


@app.command("certify")
def certify(
    model: Annotated[str, typer.Argument(help="hf://ns/repo[@rev] or a local package dir.")],
    package_only: Annotated[bool, typer.Option("--package-only",
                                               help="Certify the package only.")] = False,
    api_base: Annotated[str | None, typer.Option(
        "--api-base", help="OpenAI-compatible base URL (without /v1) to smoke-test.")] = None,
    report_out: Annotated[str | None, typer.Option("--report-out",
                                                   help="Write cert.json here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report JSON.")] = False,
    prompt: Annotated[str, typer.Option(help="Prompt for the runtime gates.")] = "Say ok.",
    max_tokens: Annotated[int, typer.Option(help="max_tokens for the runtime gates.")] = 2,
    served_model: Annotated[str | None, typer.Option(
        help="Model id the endpoint serves (default: MODEL as given).")] = None,
    api_key: Annotated[str | None, typer.Option(
        help="Bearer token for the endpoint (or MESH_LLM_API_KEY); never reported.",
        show_default=False)] = None,
    timeout: Annotated[float, typer.Option(help="Per-request timeout, seconds.")] = 120.0,
    concurrency: Annotated[int, typer.Option(help="Parallel requests for the "
                                             "concurrency gate.")] = 4,
    strict: StrictOpt = False,
    deadline: Annotated[float, typer.Option(help="Overall time limit for all runtime "
                                            "gates, seconds.")] = 600.0,
    runtime_abi: Annotated[str | None, typer.Option(
        help="Check skippy_abi_version against this runtime ABI (X.Y.Z).")] = None,
    min_mesh_llm: Annotated[str | None, typer.Option(
        "--min-mesh-llm", metavar="VERSION",
        help="The oldest mesh-llm release the package must load on (X.Y.Z): a package that "
        "needs a newer one (publisher metadata >= 0.77.0, request defaults >= 0.78.1) is an "
        "error, not a note.")] = None,
    allow_unpinned: Annotated[bool, typer.Option(
        help="Accept a moving hf:// revision (warning instead of error).")] = False,
    verify_sha256: Annotated[bool | None, typer.Option(
        "--verify-sha256/--no-verify-sha256",
        help="Hash every artifact (default: on for local dirs; hf:// uses Hub-attested "
        "hashes unless set).")] = None,
    verify_cache: Annotated[str | None, typer.Option(
        help="Cache file of computed digests keyed on (path, size, mtime, ctime, inode).")
    ] = None,
    stages: Annotated[int | None, typer.Option(
        help="Also show the package tool's N-stage plan.")] = None,
    layers: Annotated[str | None, typer.Option(
        "--layers", metavar="A..B", help="Certify only this node's slice: layers A to B-1 "
        "(half-open); the manifest-wide checks still run.")] = None,
    stage: Annotated[str | None, typer.Option(
        "--stage", metavar="I/N", help="Certify only stage I of the package tool's N-stage "
        "plan (I from 0); merge the slices with `meshcert report merge`.")] = None,
    hash_once: Annotated[bool, typer.Option(
        "--hash-once", help="With --stage I/N: hash only this stage's share of the N-stage "
        "plan, so the N slices hash each artifact once (a part several stages load, such as "
        "shared/common.gguf, is hashed by one of them; the others check its size and header). "
        "Merge all N slices with `meshcert report merge`.")] = False,
    source: Annotated[str | None, typer.Option(
        help="Source GGUF (or first shard) to compare tensors with.")] = None,
    evidence: Annotated[str | None, typer.Option(
        help="decisions.json from `meshcert evidence report`.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or summary: "
                                        "only the errors, on stderr.")] = False,
    materialize: Annotated[bool, typer.Option(
        "--materialize", help="Build both certification stage GGUFs and re-open them with "
        "llama.cpp's parser.")] = False,
    materialize_dir: Annotated[str | None, typer.Option(
        help="Where materialized stages are kept (default: stages/ in the user cache dir, "
        "~/.cache/meshcert/stages on Linux, ~/Library/Caches/meshcert/stages on macOS).")
    ] = None,
    parity: Annotated[str | None, typer.Option(
        "--parity", help="Source GGUF: reassemble the model from the package and compare "
        "greedy tokens and logits under llama.cpp.")] = None,
    parity_prompts: Annotated[str | None, typer.Option(
        help="Prompts for --parity, one per line (default: three built-in prompts).")] = None,
    parity_tokens: Annotated[int, typer.Option(help="Greedy tokens per prompt.")] = 16,
    parity_max_bytes: Annotated[int, typer.Option(
        help="Refuse --parity for models larger than this.")] = 8 << 30,
    hf_job: Annotated[bool, typer.Option(
        "--hf-job", help="Certify an hf:// package on Hugging Face Jobs: --stages N jobs, each "
        "hashing its slice next to the storage, merged into one report. A dry run (the plan "
        "and its maximum cost) unless --confirm.")] = False,
    confirm: Annotated[bool, typer.Option(
        "--confirm", help="--hf-job: submit the jobs (this spends money).")] = False,
    follow: Annotated[bool, typer.Option(
        "--follow", help="--hf-job: stream the jobs' logs to stderr while they run.")] = False,
    max_cost_usd: Annotated[float | None, typer.Option(
        help="--hf-job: refuse a plan whose maximum cost is above this.")] = None,
    flavor: Annotated[str, typer.Option(
        help="--hf-job: a flavor of the Hub's hardware list, or auto (the cheapest that "
        "fits).")] = "auto",
    install: Annotated[str | None, typer.Option(
        help="--hf-job: what a job pip-installs (default meshcert==<this version>).")] = None,
    mounted_from: Annotated[str | None, typer.Option(
        help="The local MODEL directory is this hf://ns/repo@<commit> mounted read-only (an "
        "HF Jobs volume): files are hashed here, the report names the Hub ref.")] = None,
    llama_timeout: Annotated[float, typer.Option(
        help="Wall clock in seconds of each llama.cpp worker (--materialize's re-open, "
        "--parity's load and decode of each model); one that outlives it is "
        "llama_cpp_crashed.")] = 600.0,
    attest_key: Annotated[str | None, typer.Option(
        "--attest-key", metavar="NAME.key", help="Sign a passed or failed certification of "
        "the whole package (in-toto/VSA in DSSE, Ed25519; docs/attestation.md).")] = None,
    attestation_out: Annotated[str | None, typer.Option(
        "--attestation-out", metavar="PATH", help="--attest-key: write the attestation here "
        "(default: <report stem>.intoto.jsonl beside --report-out).")] = None,
    trust: Annotated[str | None, typer.Option(
        "--trust", metavar="trust.toml", help="Verify the package's signed attestation "
        "under this trust policy: mode warn reports a missing or bad one as a warning, "
        "enforce as an error.")] = None,
    attestation: Annotated[str | None, typer.Option(
        "--attestation", metavar="FILE", help="--trust: the attestation to verify (default: "
        "attestations/meshcert.intoto.jsonl in the package).")] = None,
    html: HtmlOpt = None,
    md: MdOpt = None,
    junit: JunitOpt = None,
    sarif: SarifOpt = None,
) -> None:
    """Certify a layer package; exit 0 passed, 1 failed, 2 usage error, 3 incomplete."""
    from meshcert.certify.service import CertRequest, RuntimeRequest, certify_package
    from meshcert.certify.view import CertOptions
    from meshcert.cli.console import RichProgress
    from meshcert.core.progress import NullProgress, ProgressObserver

    if package_only == (api_base is not None):
        raise typer.BadParameter("give exactly one of --package-only or --api-base",
                                 param_hint="--package-only / --api-base")
    if not prompt.strip():
        raise typer.BadParameter("must not be blank", param_hint="--prompt")
    if max_tokens <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--max-tokens")
    if concurrency <= 0 or concurrency > 256:
        raise typer.BadParameter("must be within 1..256", param_hint="--concurrency")
    if timeout <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--timeout")
    if deadline <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--deadline")
    if llama_timeout <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--llama-timeout")
    if stages is not None and stages <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--stages")
    if runtime_abi is not None and not _ABI.match(runtime_abi):
        raise typer.BadParameter("must be major.minor[.patch]", param_hint="--runtime-abi")
    if min_mesh_llm is not None and not _ABI.match(min_mesh_llm.removeprefix("v")):
        raise typer.BadParameter("must be major.minor[.patch]", param_hint="--min-mesh-llm")
    check_local_model(model)
    signing = _signing(attest_key, attestation_out, report_out)
    if hf_job:
        from meshcert.cli.hf_job_cmd import certify_on_hf_jobs

        for flag, given in (("--api-base", api_base is not None), ("--source", source),
                            ("--parity", parity), ("--materialize", materialize),
                            ("--layers", layers), ("--stage", stage),
                            ("--hash-once", hash_once),
                            ("--mounted-from", mounted_from), ("--trust", trust),
                            ("--attestation", attestation),
                            ("--min-mesh-llm", min_mesh_llm is not None)):
            if given:
                raise typer.BadParameter(f"{flag} cannot be combined with --hf-job",
                                         param_hint="--hf-job")
        certify_on_hf_jobs(
            model, stages=stages, flavor=flavor, install=install, confirm=confirm,
            follow=follow, max_cost_usd=max_cost_usd, runtime_abi=runtime_abi,
            allow_unpinned=allow_unpinned, report_out=report_out, json_out=json_out,
            quiet=quiet, html=html, md=md, junit=junit, sarif=sarif, strict=strict,
            signing=signing)
    for flag, given in (("--confirm", confirm), ("--follow", follow),
                        ("--max-cost-usd", max_cost_usd is not None),
                        ("--flavor", flavor != "auto"), ("--install", install is not None)):
        if given:
            raise typer.BadParameter(f"{flag} only applies with --hf-job", param_hint=flag)
    scope = parse_scope(layers, stage, hash_once)
    if scope is not None and source is not None:
        raise typer.BadParameter("--source compares every tensor of the whole package; it "
                                 "cannot be combined with --layers/--stage",
                                 param_hint="--source")
    parity_request = _parity_request(parity, parity_prompts, parity_tokens, parity_max_bytes,
                                     llama_timeout)
    runtime = None
    if api_base is not None:
        runtime = RuntimeRequest(
            api_base=validate_api_base(api_base), model_id=served_model or model, prompt=prompt,
            max_tokens=max_tokens, api_key=api_key or os.environ.get("MESH_LLM_API_KEY") or None,
            timeout_s=timeout, concurrency=concurrency, strict=strict, deadline_s=deadline)
    options = CertOptions(
        runtime_abi=runtime_abi, min_mesh_llm=min_mesh_llm, allow_unpinned=allow_unpinned,
        verify_sha256=verify_sha256, strict=strict,
        stages=stages, evidence_verdicts=load_evidence_verdicts(evidence) if evidence else None,
        scope=scope)
    request = CertRequest(model=model, options=options, runtime=runtime,
                          verify_cache=verify_cache, source_gguf=source,
                          materialize=materialize, materialize_dir=materialize_dir,
                          parity=parity_request, llama_timeout_s=llama_timeout,
                          mounted_from=mounted_from,
                          extra_findings=_trust_gate(trust, attestation))
    progress: ProgressObserver = NullProgress() if (quiet or json_out) else RichProgress()
    try:
        report = certify_package(request, progress)
    except KeyboardInterrupt:
        typer.echo("interrupted: no report written", err=True)
        raise typer.Exit(Exit.INCOMPLETE) from None
    if signing is not None:
        from meshcert.attest.statement import VerdictOptions
        from meshcert.cli.attest_sign import sign_certification

        verdict = VerdictOptions(strict=strict, source=source is not None,
                                 parity=parity is not None, materialize=materialize)
        report = sign_certification(report, signing[0], signing[1], options=verdict,
                                    quiet=quiet)
    deliver(report, report_out=report_out, json_out=json_out, quiet=quiet, html=html, md=md,
            junit=junit, sarif=sarif)


_HUB_LIKE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*([@:].+)?$")


def check_local_model(model: str) -> None:
    """A local MODEL that does not exist, or is a file, is a usage error (exit 2) before any
    work: most often a mistyped path. hf:// refs, a direct .gguf path (its own finding, as
    mesh-llm rejects it) and a directory without a manifest (a package fault) go on to
    certification."""
    from meshcert.core.refs import RefError, parse_ref

    try:
        ref = parse_ref(model)
    except RefError:
        return  # the report names it
    if ref.kind != "local" or ref.local_path is None:
        return
    path = ref.local_path
    if os.path.isdir(path):
        return
    if os.path.exists(path):
        raise typer.BadParameter(f"{model!r} is a file, not a package directory: give the "
                                 "directory holding model-package.json, or "
                                 "hf://namespace/repo[@revision]", param_hint="MODEL")
    hint = (f" (a Hub repo? give hf://{model.strip()})" if _HUB_LIKE.match(model.strip())
            else "")
    raise typer.BadParameter(f"{model!r} does not exist: give a package directory holding "
                             f"model-package.json, or hf://namespace/repo[@revision]{hint}",
                             param_hint="MODEL")


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
def inspect(
    path: Annotated[str, typer.Argument(
        metavar="PATH.gguf", help="A GGUF file, or the first shard of a split set "
        "(*-00001-of-0000N.gguf).")],
    report_out: Annotated[str | None, typer.Option("--report-out",
                                                   help="Write the report JSON here.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the report JSON.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No summary.")] = False,
    html: HtmlOpt = None,
    md: MdOpt = None,
    junit: JunitOpt = None,
    sarif: SarifOpt = None,
) -> None:
    """Audit one GGUF with the checks that apply to a single file, and llama.cpp's own
    parser; exit 0 no error findings, 1 error findings, 2 usage error, 3 incomplete."""
    from meshcert.certify.inspect_file import inspect_gguf

    if not os.path.isfile(path):
        raise typer.BadParameter(f"{path!r} is not a file", param_hint="PATH.gguf")
    deliver(inspect_gguf(path), report_out=report_out, json_out=json_out, quiet=quiet,
            html=html, md=md, junit=junit, sarif=sarif, inspect=True)


def _parity_request(source: str | None, prompts_file: str | None, tokens: int,
                    max_bytes: int, timeout_s: float) -> ParityRequest | None:
    if source is None:
        if prompts_file is not None:
            raise typer.BadParameter("needs --parity SOURCE.gguf", param_hint="--parity-prompts")
        return None
    from meshcert.certify.split_parity import ParityRequest  # numpy only when asked for

    if not os.path.isfile(source):
        raise typer.BadParameter(f"{source!r} is not a file", param_hint="--parity")
    if not 1 <= tokens <= 128:
        raise typer.BadParameter("must be within 1..128", param_hint="--parity-tokens")
    if max_bytes <= 0:
        raise typer.BadParameter("must be > 0", param_hint="--parity-max-bytes")
    request = ParityRequest(source=source, tokens=tokens, max_bytes=max_bytes,
                            timeout_s=timeout_s)
    if prompts_file is not None:
        try:
            with open(prompts_file, encoding="utf-8") as handle:
                prompts = [line.rstrip("\n") for line in handle if line.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise typer.BadParameter(f"cannot read {prompts_file!r}: {exc}",
                                     param_hint="--parity-prompts") from None
        if not prompts:
            raise typer.BadParameter("holds no prompt", param_hint="--parity-prompts")
        request.prompts = prompts
    return request
