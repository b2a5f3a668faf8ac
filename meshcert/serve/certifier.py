"""One certification job: the package at a resolved commit certified package-only,
header-only by default (the Hub's LFS SHA-256 as the digests, as `models certify hf://...`
does) or with every byte hashed on HF Jobs (`[hf_jobs]`, meshcert.serve.full_hashing), the
verdict signed when it can be (docs/attestation.md), and the result the comments and the status
page show. A job's key binds its verdict to what produced it."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from meshcert.core.version import MESH_LLM_VERSION, __version__
from meshcert.serve import stopping

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from meshcert.certify.report import CertReport
    from meshcert.serve.config import HfJobsSection
    from meshcert.serve.release_matrix import Recheck

MAX_FINDINGS = 30  # per package in a comment; the rest are counted


def job_key(repo: str, commit: str, trust_digest: str, mode: str = "header-only") -> str:
    """(repo, resolved commit, meshcert version, mesh-llm rules version, trust digest), and
    how the verdict is produced (`HfJobsSection.mode`: header-only, or hashed on HF Jobs)."""
    parts = [repo.lower(), commit.lower(), __version__, MESH_LLM_VERSION, trust_digest]
    if mode != "header-only":  # the keys of header-only verdicts stay what they were
        parts.append(mode)
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Certified:
    result: dict[str, Any]  # what a comment and /status show (JSON-able)
    envelope: str | None  # the signed .intoto.jsonl line, None when none can be made


def certify_commit(repo: str, commit: str, key: Ed25519PrivateKey,
                   verifier_id: str | None = None, hf_jobs: HfJobsSection | None = None
                   ) -> Certified:
    """Certify hf://repo@commit and sign the verdict. Never raises for the package's sake: a
    certification that could not finish is an `incomplete` result (and nothing is signed).
    `hf_jobs` with `stages`: full hashing on HF Jobs, as far as the section allows."""
    from meshcert.attest.sign import sign_report
    from meshcert.certify.service import CertRequest, certify_package
    from meshcert.certify.view import CertOptions

    ref = f"hf://{repo}@{commit}"
    hashing = None
    if hf_jobs is not None and hf_jobs.stages:
        from meshcert.serve.full_hashing import certify_on_jobs

        hashed = certify_on_jobs(ref, hf_jobs)
        report, hashing = hashed.report, hashed.note
    else:
        report = certify_package(CertRequest(model=ref,
                                             options=CertOptions(verify_sha256=False)))
    signed = sign_report(report, key, "", verifier_id=verifier_id)
    if isinstance(signed, str):
        return Certified(result_of(report, repo, commit, unsigned=signed, hashing=hashing),
                         None)
    return Certified(result_of(signed.report, repo, commit, unsigned=None, hashing=hashing),
                     signed.envelope.to_json_line())


def result_of(report: CertReport, repo: str, commit: str, *, unsigned: str | None,
              hashing: str | None = None) -> dict[str, Any]:
    from meshcert.reports.certification.verdict import verdict

    findings = [{"code": f.code, "severity": f.severity, "message": f.message,
                 "remediation": f.remediation, "path": f.path} for f in report.findings
                if f.severity != "info"]
    return {
        "repo": repo, "commit": commit, "status": report.status,
        "sentence": verdict(report).sentence(), "findings": findings[:MAX_FINDINGS],
        "more_findings": max(0, len(findings) - MAX_FINDINGS),
        "meshcert": report.tool.version,
        "mesh_llm_rules": report.tool.mesh_llm_version or MESH_LLM_VERSION,
        "finished_at": report.finished_at, "attestation_url": None, "unsigned": unsigned,
        "hashing": hashing,
    }


def failed_result(repo: str, commit: str | None, why: str) -> dict[str, Any]:
    """A package the service could not certify at all (its repo or commit is gone)."""
    return {"repo": repo, "commit": commit, "status": "incomplete",
            "sentence": f"certification incomplete: {why}", "findings": [],
            "more_findings": 0, "meshcert": __version__, "mesh_llm_rules": MESH_LLM_VERSION,
            "finished_at": None, "attestation_url": None, "unsigned": why}


class CertifyPool:
    """Certifications run in worker processes (spawned, kept warm): a certification reads and
    parses in Python for seconds, and in the web process it would hold the interpreter lock
    away from the event loop that must answer deliveries within milliseconds. A worker dies
    with the service (Linux: PR_SET_PDEATHSIG), so `kill -9` leaves no certification behind."""

    def __init__(self, key: Ed25519PrivateKey, verifier_id: str | None, workers: int,
                 warm_dir: str, hf_jobs: HfJobsSection | None = None) -> None:
        """`key` reaches each worker through its start pipe (pickled initargs), never through
        its command line or its environment (which every process it starts would inherit).
        `warm_dir`: an empty folder in the state folder that the warm-up certifies (a folder
        of the service's own, so a `kill -9` during the warm-up leaves nothing in /tmp)."""
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self._pool = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"),
            initializer=_child_init,
            initargs=(key.private_bytes_raw(), verifier_id,
                      hf_jobs.model_dump() if hf_jobs is not None else None))
        self._warm = [self._pool.submit(_child_warm, warm_dir) for _ in range(workers)]

    def __call__(self, repo: str, commit: str) -> Certified:
        from concurrent.futures.process import BrokenProcessPool

        try:
            return self._pool.submit(_child_certify, repo, commit).result()
        except BrokenProcessPool:
            return Certified(failed_result(repo, commit, "the certification worker died"), None)

    def recheck(self, catalog: str, release: str, runtime_abi: str | None) -> Recheck:
        """`catalog recheck` in a worker process (its certifications off the event loop)."""
        return self._pool.submit(_child_recheck, catalog, release, runtime_abi).result()

    def close(self, grace_s: float = 15.0) -> None:
        """Stop now: a certification still running is ended (its task was requeued). Each
        worker gets SIGTERM and up to `grace_s` to cancel the HF Jobs it submitted
        (`Terminated`), then SIGKILL."""
        import time

        # the executor's own processes (it offers no public way to end a running call)
        processes = dict(getattr(self._pool, "_processes", None) or {})
        self._pool.shutdown(wait=False, cancel_futures=True)
        for child in processes.values():
            child.terminate()
        deadline = time.monotonic() + grace_s
        for child in processes.values():
            child.join(max(0.0, deadline - time.monotonic()))
            if child.is_alive():
                child.kill()


_CHILD: dict[str, Any] = {}


def _child_init(raw_key: bytes, verifier_id: str | None,
                hf_jobs: dict[str, Any] | None = None) -> None:
    import signal
    import sys

    if sys.platform.startswith("linux"):
        import ctypes

        PR_SET_PDEATHSIG = 1
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the service's to handle
    stopping.install()  # SIGTERM: unwind a certification, cancelling its HF Jobs
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    _CHILD["key"] = Ed25519PrivateKey.from_private_bytes(raw_key)
    _CHILD["verifier_id"] = verifier_id
    if hf_jobs is not None:
        from meshcert.serve.config import HfJobsSection

        _CHILD["hf_jobs"] = HfJobsSection.model_validate(hf_jobs)


def _child_warm(empty: str) -> None:
    """The certifier's imports, its checks and its spare worker processes, paid before the
    first job: one certification of the empty folder `empty` (it fails at once, having loaded
    all)."""
    import huggingface_hub  # noqa: F401  (a Hub certification's client and sources)

    import meshcert.attest.sign  # noqa: F401
    import meshcert.certify.sources.hub  # noqa: F401
    import meshcert.core.hub.api  # noqa: F401
    import meshcert.core.hub.files  # noqa: F401
    import meshcert.reports.certification.verdict  # noqa: F401
    from meshcert.certify.service import CertRequest, certify_package, prestart_workers

    prestart_workers()
    certify_package(CertRequest(model=empty))
    # the Hub clients' set-up (TLS trust store, sessions), without a request
    from huggingface_hub.utils import get_session

    from meshcert.core.hub.api import HubApi
    from meshcert.core.hub.files import new_client
    from meshcert.core.hub.settings import HubSettings

    settings = HubSettings.from_env()
    HubApi(settings)
    get_session()
    new_client(settings).close()


def _child_certify(repo: str, commit: str) -> Certified:
    with stopping.busy():
        return certify_commit(repo, commit, _CHILD["key"], _CHILD["verifier_id"],
                              _CHILD.get("hf_jobs"))


def _child_recheck(catalog: str, release: str, runtime_abi: str | None) -> Recheck:
    from meshcert.serve.release_matrix import recheck_catalog

    return recheck_catalog(catalog, release, runtime_abi)
