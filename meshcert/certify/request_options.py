"""`models certify`'s options, as given, and the rules that turn them into a `CertRequest`.

`CertifyInput` holds the option values that decide what is certified and how; `check_values`
and `cert_request` apply the rules (ranges, "give one of", "needs --x") and raise one
`OptionError` (meshcert.core.usage) for the first value that breaks one, before any work.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from meshcert.core.usage import OptionError, positive, release, within

if TYPE_CHECKING:
    from meshcert.certify.runtime.requests import RuntimeRequest
    from meshcert.certify.scope import ScopeRequest
    from meshcert.certify.service import CertRequest
    from meshcert.certify.split_parity import ParityRequest

MAX_CONCURRENCY = 256
_HUB_LIKE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*/[A-Za-z0-9][A-Za-z0-9._-]*([@:].+)?$")


@dataclass(frozen=True)
class CertifyInput:
    """The values of `models certify`'s options that make its request (the defaults are the
    command's); `trust` and `attestation` are read by the attestation part."""

    model: str
    package_only: bool = False
    api_base: str | None = None
    prompt: str = "Say ok."
    max_tokens: int = 2
    served_model: str | None = None
    api_key: str | None = None  # None: MESH_LLM_API_KEY
    timeout: float = 120.0
    concurrency: int = 4
    strict: bool = False
    deadline: float = 600.0
    runtime_abi: str | None = None
    min_mesh_llm: str | None = None
    allow_unpinned: bool = False
    verify_sha256: bool | None = None
    verify_cache: str | None = None
    stages: int | None = None
    layers: str | None = None
    stage: str | None = None
    hash_once: bool = False
    source: str | None = None
    evidence: str | None = None
    materialize: bool = False
    materialize_dir: str | None = None
    parity: str | None = None
    parity_prompts: str | None = None
    parity_tokens: int = 16
    parity_max_bytes: int = 8 << 30
    mounted_from: str | None = None
    llama_timeout: float = 600.0
    trust: str | None = None
    attestation: str | None = None


def check_values(given: CertifyInput) -> None:
    """The rules on single values and the run's mode, in the order the command checks them;
    then a local MODEL must exist (`check_local_model`)."""
    if given.package_only == (given.api_base is not None):
        raise OptionError("give exactly one of --package-only or --api-base",
                          "--package-only / --api-base")
    if given.package_only and given.served_model is not None:  # not silently ignored
        raise OptionError("only applies with --api-base: it names the model the endpoint "
                          "serves, and --package-only asks no endpoint", "--served-model")
    if not given.prompt.strip():
        raise OptionError("must not be blank", "--prompt")
    positive(given.max_tokens, "--max-tokens")
    within(given.concurrency, 1, MAX_CONCURRENCY, "--concurrency")
    positive(given.timeout, "--timeout")
    positive(given.deadline, "--deadline")
    positive(given.llama_timeout, "--llama-timeout")
    if given.stages is not None:
        positive(given.stages, "--stages")
    release(given.runtime_abi, "--runtime-abi")
    release(given.min_mesh_llm.removeprefix("v") if given.min_mesh_llm else None,
            "--min-mesh-llm")
    check_local_model(given.model)


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
        raise OptionError(f"{model!r} is a file, not a package directory: give the "
                          "directory holding model-package.json, or "
                          "hf://namespace/repo[@revision]", "MODEL")
    hint = (f" (a Hub repo? give hf://{model.strip()})" if _HUB_LIKE.match(model.strip())
            else "")
    raise OptionError(f"{model!r} does not exist: give a package directory holding "
                      f"model-package.json, or hf://namespace/repo[@revision]{hint}", "MODEL")


def local_only_options(given: CertifyInput) -> dict[str, bool]:
    """The options that need the package on this machine (or a live server), by whether they
    were given: none of them goes with a certification on HF Jobs."""
    return {"--api-base": given.api_base is not None, "--source": bool(given.source),
            "--parity": bool(given.parity), "--materialize": given.materialize,
            "--layers": bool(given.layers), "--stage": bool(given.stage),
            "--hash-once": given.hash_once, "--mounted-from": bool(given.mounted_from),
            "--trust": bool(given.trust), "--attestation": bool(given.attestation),
            "--min-mesh-llm": given.min_mesh_llm is not None}


def cert_request(given: CertifyInput) -> CertRequest:
    """The request of values that passed `check_values`: the slice, the parity run, the runtime
    gates and the evidence verdicts, each checked as it is built (the trust gate is the
    caller's: `extra_findings`)."""
    from meshcert.certify.service import CertRequest
    from meshcert.certify.view import CertOptions

    scope = parse_scope(given.layers, given.stage, given.hash_once)
    if scope is not None and given.source is not None:
        raise OptionError("--source compares every tensor of the whole package; it cannot be "
                          "combined with --layers/--stage", "--source")
    parity = parity_request(given.parity, given.parity_prompts, given.parity_tokens,
                            given.parity_max_bytes, given.llama_timeout)
    runtime = runtime_request(given) if given.api_base is not None else None
    options = CertOptions(
        runtime_abi=given.runtime_abi, min_mesh_llm=given.min_mesh_llm,
        allow_unpinned=given.allow_unpinned, verify_sha256=given.verify_sha256,
        strict=given.strict, stages=given.stages,
        evidence_verdicts=load_evidence_verdicts(given.evidence) if given.evidence else None,
        scope=scope, source_identity=True)
    return CertRequest(model=given.model, options=options, runtime=runtime,
                       verify_cache=given.verify_cache, source_gguf=given.source,
                       materialize=given.materialize, materialize_dir=given.materialize_dir,
                       parity=parity, llama_timeout_s=given.llama_timeout,
                       mounted_from=given.mounted_from)


def runtime_request(given: CertifyInput) -> RuntimeRequest:
    from meshcert.certify.runtime.requests import RuntimeRequest

    return RuntimeRequest(
        api_base=validate_api_base(given.api_base or ""),
        model_id=given.served_model or given.model, prompt=given.prompt,
        max_tokens=given.max_tokens,
        api_key=given.api_key or os.environ.get("MESH_LLM_API_KEY") or None,
        timeout_s=given.timeout, concurrency=given.concurrency, strict=given.strict,
        deadline_s=given.deadline)


def validate_api_base(value: str) -> str:
    """http(s) URL with a host, without /v1; a trailing '/' is trimmed (as mesh-llm does)."""
    base = value.strip().rstrip("/")
    parsed = urlparse(base)
    if parsed.scheme not in {"http", "https"} or not parsed.hostname:
        raise OptionError(f"{value!r} is not an http(s) URL with a host", "--api-base")
    if parsed.path.rstrip("/").endswith("/v1"):
        raise OptionError("give the base URL without /v1", "--api-base")
    return base


def load_evidence_verdicts(path: str) -> dict[str, str]:
    """policy -> verdict from an evidence decisions.json."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise OptionError(f"cannot read evidence {path!r}: {exc}", "--evidence") from None
    decisions = data.get("decisions") if isinstance(data, dict) else None
    if not isinstance(decisions, list):
        raise OptionError(f"{path!r} has no decisions[] list", "--evidence")
    return {str(d.get("policy")): str(d.get("verdict")) for d in decisions if isinstance(d, dict)}


def parse_scope(layers: str | None, stage: str | None, hash_once: bool = False
                ) -> ScopeRequest | None:
    """--layers A..B or --stage I/N (not both) -> the slice to certify."""
    from meshcert.certify.scope import parse_layers, parse_stage

    if layers is not None and stage is not None:
        raise OptionError("give --layers or --stage, not both", "--layers / --stage")
    if hash_once and stage is None:
        raise OptionError("needs --stage I/N (the share of the N-stage plan)", "--hash-once")
    try:
        if layers is not None:
            return parse_layers(layers)
        return parse_stage(stage, hash_once=hash_once) if stage is not None else None
    except ValueError as exc:
        raise OptionError(str(exc), "--layers" if layers else "--stage") from None


def parity_request(source: str | None, prompts_file: str | None, tokens: int,
                   max_bytes: int, timeout_s: float) -> ParityRequest | None:
    """--parity SOURCE.gguf and its settings -> the parity run (None: not asked for)."""
    if source is None:
        if prompts_file is not None:
            raise OptionError("needs --parity SOURCE.gguf", "--parity-prompts")
        return None
    from meshcert.certify.split_parity import ParityRequest  # numpy only when asked for

    if not os.path.isfile(source):
        raise OptionError(f"{source!r} is not a file", "--parity")
    within(tokens, 1, 128, "--parity-tokens")
    positive(max_bytes, "--parity-max-bytes")
    request = ParityRequest(source=source, tokens=tokens, max_bytes=max_bytes,
                            timeout_s=timeout_s)
    if prompts_file is not None:
        try:
            with open(prompts_file, encoding="utf-8") as handle:
                prompts = [line.rstrip("\n") for line in handle if line.strip()]
        except (OSError, UnicodeDecodeError) as exc:
            raise OptionError(f"cannot read {prompts_file!r}: {exc}",
                              "--parity-prompts") from None
        if not prompts:
            raise OptionError("holds no prompt", "--parity-prompts")
        request.prompts = prompts
    return request
