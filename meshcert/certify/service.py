"""Certification use case: MODEL text + options -> CertReport. No printing, no exiting."""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from meshcert.certify.manifest_parse import ParsedManifest
from meshcert.certify.report_ref import RefInfo
from meshcert.certify.runtime.requests import RuntimeRequest
from meshcert.certify.view import CertOptions, PackageView
from meshcert.certify.worker_questions import WorkerQuestions
from meshcert.certify.workers import prestart_workers
from meshcert.core.clock import utc_now
from meshcert.core.findings import Finding, finding
from meshcert.core.progress import NullProgress, ProgressObserver
from meshcert.core.refs import PackageRef, RefError, parse_ref

__all__ = ["CertRequest", "RuntimeRequest", "certify_package", "certify_with_view", "load_view"]
_COMMIT = re.compile(r"^[0-9a-fA-F]{40}$")

if TYPE_CHECKING:
    from meshcert.certify.package_gguf.source_facts import SourceFacts
    from meshcert.certify.report import CertReport, RuntimeGate
    from meshcert.certify.split_parity import ParityRequest
    from meshcert.core.hub.gate import RequestGate
    from meshcert.core.hub.provenance import SourceCheck


@dataclass
class CertRequest:
    model: str
    options: CertOptions = field(default_factory=CertOptions)
    runtime: RuntimeRequest | None = None  # None: package-only
    verify_cache: str | None = None
    # False: the cache is written, never read, so every digest is hashed in this run (a
    # certification that will be signed: meshcert.core.verify_cache says why)
    verify_cache_lookups: bool = True
    source_gguf: str | None = None
    materialize: bool = False  # build the certification stage GGUFs (meshcert.certify.materialize)
    materialize_dir: str | None = None  # default: the user cache dir
    parity: ParityRequest | None = None  # reassemble and compare with this source GGUF
    llama_timeout_s: float = 600.0  # wall clock of each llama.cpp worker (--materialize)
    # hf://ns/repo@<40-hex>: the local MODEL directory is that repo mounted at that commit (an
    # HF Jobs volume); the files are read and hashed locally, the report names the Hub ref
    mounted_from: str | None = None
    hub_gate: RequestGate | None = None  # shared by several hf:// runs (a catalog's packages)
    # --source facts already gathered (a writer that hashed the source and the package's
    # tensors while writing them): used instead of reading and hashing source_gguf again
    source_facts: SourceFacts | None = None
    # the recorded source identity already asked of the Hub (a writer that checked it before
    # writing): used instead of asking again when options.source_identity is set
    source_check: SourceCheck | None = None
    # more findings from the gathered facts, decided by the caller (e.g. a trust policy's
    # verdict on the package's signed attestation, meshcert.attest.policy_check)
    extra_findings: Callable[[PackageView], list[Finding]] | None = None


def _empty_view(ref: PackageRef | None, text: str, options: CertOptions) -> PackageView:
    info = RefInfo(kind=ref.kind if ref else "local", repo=ref.repo if ref else None,
                   requested_revision=ref.revision if ref else None, pinned=False)
    return PackageView(ref=info, display_ref=text, local_dir=None, manifest_raw=None,
                       parsed=ParsedManifest(None), options=options)


def load_view(request: CertRequest, ref: PackageRef, progress: ProgressObserver,
              on_headers: Callable[[PackageView], None] | None = None,
              on_files: Callable[[PackageView, list[str]], None] | None = None
              ) -> PackageView:
    """Gather the package facts from wherever the ref points (a local loader calls
    `on_files` once it knows which GGUFs it will read, and `on_headers` once their headers are
    read, before it hashes the files)."""
    if ref.kind == "hf":
        from meshcert.certify.sources.hub import load_hub_package

        return load_hub_package(ref, options=request.options, progress=progress,
                                gate=request.hub_gate)
    from meshcert.certify.sources.local import load_local_package

    return load_local_package(ref.local_path or ref.text, display_ref=ref.text,
                              options=request.options, progress=progress,
                              verify_cache=request.verify_cache, on_headers=on_headers,
                              verify_cache_lookups=request.verify_cache_lookups,
                              on_files=on_files)


def run_runtime(runtime: RuntimeRequest, progress: ProgressObserver) -> list[RuntimeGate]:
    from meshcert.certify.runtime.gates import run_runtime_gates

    return run_runtime_gates(runtime, progress=progress)


def certify_package(request: CertRequest, progress: ProgressObserver | None = None
                    ) -> CertReport:
    """Certify one package ref; always returns a report, whatever went wrong."""
    return certify_with_view(request, progress)[0]


def certify_with_view(request: CertRequest, progress: ProgressObserver | None = None
                      ) -> tuple[CertReport, PackageView]:
    """`certify_package`, also returning the facts the checks read (the parsed manifest, the
    listing), for callers that compare the package with what someone says about it."""
    progress = progress or NullProgress()
    started = utc_now()
    prestart_workers()  # a no-op when the caller already did
    try:
        ref = parse_ref(request.model)
    except RefError as err:
        from meshcert.certify.engine import build_report

        view = _empty_view(None, request.model, request.options)
        view.source_findings.append(finding(err.code, str(err)))
        return build_report(view, input_text=request.model, started_at=started,
                            runtime_gates=_runtime_or_default(request, progress)), view
    if request.options.verify_sha256 is None:  # default: hash local files, trust the Hub's LFS
        request = replace(request, options=replace(request.options,
                                                    verify_sha256=ref.kind == "local"))
    request = replace(request, options=replace(  # what the checks of node loads were asked
        request.options, source=bool(request.source_gguf), materialize=request.materialize,
        parity=request.parity is not None))
    api_key = request.runtime.api_key if request.runtime else None
    questions = WorkerQuestions()
    try:
        view = load_view(request, ref, progress, on_headers=questions.start,
                         on_files=questions.ask_parser_early)
    except Exception as exc:  # containment: a loader bug is an incomplete report, not a crash
        view = _empty_view(ref, request.model, request.options)
        _contain(view, f"loading {request.model} failed", exc, api_key)
    # The engine is imported here, not before the package is read: its checks are imported
    # by the loader's `questions.start` once the headers are read, beside the hashing, so the
    # hashing and llama.cpp's parse start that much sooner (bench/whole_process.py verify).
    from meshcert.certify.engine import build_report

    for what, error in questions.finish(view):
        _contain(view, what, error, api_key)
    if request.mounted_from is not None:
        _as_mounted(view, ref, request.mounted_from)
    if request.options.source_identity and request.source_check is not None:
        view.source_check = request.source_check
    elif request.options.source_identity:
        from meshcert.certify.provenance import check_recorded_source

        try:
            check_recorded_source(view, request.hub_gate)
        except Exception as exc:  # containment, as above
            _contain(view, "checking the recorded source identity failed", exc, api_key)
    if request.source_gguf:
        from meshcert.certify.sources.source_gguf import attach_source

        with _work_for(view, "source_parity"):
            try:
                attach_source(view, request.source_gguf, known=request.source_facts)
            except Exception as exc:  # containment, as above
                _contain(view, f"reading --source {request.source_gguf} failed", exc, api_key)
    _load_as_node(request, view, progress, api_key)
    extra: list[Finding] = []
    if request.extra_findings is not None:
        try:
            extra = list(request.extra_findings(view))
        except Exception as exc:  # containment, as above
            _contain(view, "the caller's extra check failed", exc, api_key)
    gates = _runtime_or_default(request, progress)
    return build_report(view, input_text=request.model, started_at=started,
                        runtime_gates=gates, extra_findings=extra), view


def _load_as_node(request: CertRequest, view: PackageView, progress: ProgressObserver,
                  api_key: str | None) -> None:
    """--materialize and --parity: build what a node would load; results land on the view."""
    if request.materialize:
        from pathlib import Path

        from meshcert.certify.materialize import materialize_stages

        with _work_for(view, "stage_materialization"):
            try:
                materialize_stages(view, Path(request.materialize_dir)
                                   if request.materialize_dir else None, progress,
                                   timeout_s=request.llama_timeout_s)
            except Exception as exc:  # containment, as above
                _contain(view, "materializing the stages failed", exc, api_key)
    if request.parity is not None:
        from meshcert.certify.split_parity import run_parity

        with _work_for(view, "split_parity"):
            try:
                run_parity(view, request.parity, progress)
            except Exception as exc:  # containment, as above
                _contain(view, "split parity failed to run", exc, api_key)


@contextmanager
def _work_for(view: PackageView, check: str) -> Iterator[None]:
    """Count the time of work done for a check before it runs (a worker's load) as its own."""
    started = time.perf_counter()
    try:
        yield
    finally:
        view.work_ms[check] = view.work_ms.get(check, 0.0) + (
            time.perf_counter() - started) * 1000


def _as_mounted(view: PackageView, ref: PackageRef, mounted_from: str) -> None:
    """Name the Hub ref a mounted directory holds; a ref that is not a pinned hf:// commit,
    or a MODEL that is not a local directory, is a finding and the ref stays local."""
    try:
        mounted = parse_ref(mounted_from)
    except RefError as err:
        view.source_findings.append(finding(err.code, f"--mounted-from: {err}"))
        return
    revision = mounted.revision or ""
    if ref.kind != "local" or mounted.kind != "hf" or not _COMMIT.match(revision):
        view.source_findings.append(finding(
            "invalid_package_ref", f"--mounted-from {mounted_from!r} must be "
            "hf://ns/repo@<40-hex commit>, given with a local package directory"))
        return
    view.ref = RefInfo(kind="hf", repo=mounted.repo, requested_revision=revision,
                       resolved_commit=revision.lower(), pinned=True)


def _contain(view: PackageView, what: str, exc: Exception, api_key: str | None) -> None:
    from meshcert.core.redact import Redactor

    redact = Redactor([os.environ.get("HF_TOKEN"), os.environ.get("HUGGING_FACE_HUB_TOKEN"),
                       api_key])
    view.source_findings.append(finding("internal_error", f"{what}: {type(exc).__name__}: "
                                        f"{redact(str(exc))[:300]}"))
    view.source_incomplete = True


def _runtime_or_default(request: CertRequest, progress: ProgressObserver
                        ) -> list[RuntimeGate] | None:
    if request.runtime is None:
        return None  # engine fills the package-only gates
    try:
        return run_runtime(request.runtime, progress)
    except Exception as exc:  # containment; the text may quote the key: only the type is kept
        from meshcert.certify.engine import MESH_GATES
        from meshcert.certify.report import RuntimeGate

        return [RuntimeGate(name=name, status="incomplete",
                            details=f"not run: internal error: {type(exc).__name__}")
                for name in MESH_GATES]
