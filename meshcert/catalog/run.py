"""Certify every `layer-package` reference of a catalog: the use case, no printing.

For each distinct package: resolve the commit (the entry's pinned revision, else one sha-only
`model_info` of the default branch: RESOLVE_REQUESTS), then certify `hf://repo@<commit>`
package-only with Hub-attested hashes (the same engine as `models certify`), `concurrency`
packages at a time. Every request of the run goes through one RequestGate, so the cap on
requests in flight and a 429's Retry-After hold apply to the catalog as a whole; each request
keeps the Hub client's retry rules. A package listed twice is certified once. With a previous
report (`--since`), a package whose commit did not change is not certified again.

The cost per package is constant: RESOLVE_REQUESTS (when the entry pins no commit) plus what
certifying it alone costs (4 fixed requests and one header range read per artifact), whatever
the catalog's size.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal, Protocol

from meshcert.catalog.attested import AttestationPolicy, AttestedCheck, manifest_view
from meshcert.catalog.compare import Certified, Resolution, build_row, from_row, summarize
from meshcert.catalog.entries import PackageReference, ParsedEntry, parse_entry
from meshcert.catalog.facts import package_facts
from meshcert.catalog.mesh_versions import mixed_version_findings
from meshcert.catalog.report import (
    CatalogCounts,
    CatalogOptions,
    CatalogPackage,
    CatalogReport,
    CatalogSource,
    Change,
)
from meshcert.catalog.since import Previous, RowKey, row_key
from meshcert.catalog.sources import CatalogSnapshot
from meshcert.catalog.sources import CatalogSource as EntrySource
from meshcert.certify.engine import tool_info
from meshcert.certify.report import CertReport, OverallStatus, combine_statuses
from meshcert.core.clock import utc_now
from meshcert.core.findings import Finding, finding
from meshcert.core.hub.gate import RequestGate
from meshcert.core.hub.settings import HubSettings
from meshcert.core.usage import OptionError, release, within

RESOLVE_REQUESTS = 1  # a sha-only model_info, for a reference that pins no commit
# What certifying one package costs (bench/remote_certify.py): model_info with the listing,
# refs, the manifest and the README, then a header range read per artifact, each a request to
# the Hub's resolve URL answered by a redirect to storage and the ranged GET there.
CERTIFY_FIXED_REQUESTS = 4
SOURCE_IDENTITY_REQUESTS = 1  # model_info of the recorded source at its revision
REQUESTS_PER_ARTIFACT = 2
DEFAULT_CONCURRENCY = 4
MAX_CONCURRENCY = 32

OnCertified = Callable[[str, str, CertReport], None]  # repo, commit, report


class CatalogProgress(Protocol):
    def planned(self, total: int) -> None:
        """How many distinct packages will be resolved and certified."""

    def finished(self, repo: str, revision: str | None, status: str, done: int, total: int
                 ) -> None:
        """One package is done: its own certification's status, before the catalog's
        findings are added (called from worker threads, one at a time)."""


class NullCatalogProgress:
    def planned(self, total: int) -> None:
        return None

    def finished(self, repo: str, revision: str | None, status: str, done: int, total: int
                 ) -> None:
        return None


@dataclass
class CatalogRequest:
    options: CatalogOptions = field(default_factory=CatalogOptions)
    concurrency: int = DEFAULT_CONCURRENCY
    previous: Previous | None = None  # --since
    keep_reports: bool = False  # --out-dir: rows name their cert.json / cert.html
    # --trust FILE [--trust-attested]: the trust policy's verdicts (meshcert.attest)
    attestation: AttestationPolicy | None = None


def check_catalog_options(concurrency: int, runtime_abi: str | None) -> None:
    """`catalog certify`'s values, before the catalog is read: a concurrency within
    1..MAX_CONCURRENCY and a runtime ABI major.minor[.patch] (OptionError otherwise)."""
    within(concurrency, 1, MAX_CONCURRENCY, "--concurrency")
    release(runtime_abi, "--runtime-abi")


def check_attestation_options(trust: str | None, trust_attested: bool,
                              attestation_repo: str | None = None) -> None:
    """--trust-attested accepts the attestations of the signers --trust names: it needs it;
    --attestation-repo says where those attestations are: it needs --trust-attested."""
    if trust is None and trust_attested:
        raise OptionError("needs --trust FILE (whose signers to accept)", "--trust-attested")
    if attestation_repo is not None and not trust_attested:
        raise OptionError("needs --trust-attested (it says where the attestations to accept "
                          "are)", "--attestation-repo")
    if attestation_repo is not None and not re.match(r"^[\w.-]+/[\w.-]+$", attestation_repo):
        raise OptionError(f"{attestation_repo!r} is not a dataset id (ns/name)",
                          "--attestation-repo")


@dataclass
class CatalogRun:
    report: CatalogReport
    entries: list[ParsedEntry]  # as read
    references: list[PackageReference]  # one per report row, in the same order
    snapshot: CatalogSnapshot


def request_budget(artifacts: int, *, pinned: bool, source_identity: bool = False) -> int:
    """Hub requests one package costs in a catalog run (no retries): the same whatever the
    catalog's size or concurrency; one more when its manifest records a source repo at a
    40-hex revision (the source identity asked of the Hub, meshcert.certify.provenance)."""
    return (0 if pinned else RESOLVE_REQUESTS) + CERTIFY_FIXED_REQUESTS \
        + REQUESTS_PER_ARTIFACT * artifacts + (SOURCE_IDENTITY_REQUESTS if source_identity
                                               else 0)


def cert_paths(repo: str, commit: str) -> tuple[str, str]:
    """Where a package's reports go under --out-dir: packages/<ns>/<name>/<commit>/."""
    base = f"packages/{repo}/{commit}"
    return f"{base}/cert.json", f"{base}/cert.html"


@dataclass
class _Outcome:
    resolution: Resolution
    certified: Certified | None = None
    requests: int = 0
    reused: bool = False  # --since: the previous report's certification of this commit
    shared: bool = False  # another job certified the same commit
    attested_by: str | None = None  # the trusted signer of a valid attestation (--trust)
    by_attestation: bool = False  # accepted from it without certifying (--trust-attested)


@dataclass
class _Job:
    """One distinct package to resolve and certify (its references share the outcome)."""

    repo: str
    revision: str | None  # as recorded; a pinned commit when `pinned`
    pinned: bool
    references: list[PackageReference] = field(default_factory=list)


class _Runner:
    def __init__(self, request: CatalogRequest, settings: HubSettings,
                 progress: CatalogProgress, on_certified: OnCertified | None) -> None:
        self.request = request
        self.settings = settings
        self.progress = progress
        self.on_certified = on_certified
        self.gate = RequestGate(settings.max_parallel_requests)
        self._lock = threading.Lock()
        self._by_commit: dict[tuple[str, str], Future[_Outcome]] = {}
        self._done = 0
        self._total = 0

    def run(self, jobs: list[_Job]) -> dict[int, _Outcome]:
        from meshcert.certify.template_audits import shared_template_audits

        self._total = len(jobs)
        self.progress.planned(len(jobs))
        workers = max(1, min(self.request.concurrency, len(jobs) or 1))
        pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="catalog-package")
        try:
            with shared_template_audits():  # a template repeated by many packages: audited once
                futures = [pool.submit(self._job, job) for job in jobs]
                return {i: f.result() for i, f in enumerate(futures)}
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown(wait=True)
            self.gate.close()

    def _job(self, job: _Job) -> _Outcome:
        try:
            outcome = self._resolve_and_certify(job)
        except Exception as exc:  # containment: a bug is an incomplete row, never a crash
            outcome = _Outcome(Resolution(None, None, finding(
                "internal_error", f"certifying hf://{job.repo} failed: "
                f"{type(exc).__name__}: {str(exc)[:300]}")))
        with self._lock:
            self._done += 1
            done = self._done
            status = (outcome.certified.certification.status if outcome.certified
                      else "incomplete" if outcome.resolution.failure is None
                      or outcome.resolution.failure.code in ("hub_unreachable",
                                                             "internal_error")
                      else "failed")
            self.progress.finished(job.repo, outcome.resolution.revision, status, done,
                                   self._total)
        return outcome

    def _resolve_and_certify(self, job: _Job) -> _Outcome:
        from meshcert.core.hub.api import HubApi
        from meshcert.core.hub.errors import HubError
        from meshcert.core.hub.stats import TransferCounter

        requests = 0
        if not job.pinned and self.request.previous is None:
            attested, requests = self._attested(job.repo, job.revision, "resolved")
            if attested is not None:  # accepted: the attestation's check resolved the commit
                return attested
        if job.pinned:
            assert job.revision is not None
            resolution = Resolution(job.revision.lower(), "entry")
        else:
            counter = TransferCounter()
            api = HubApi(self.settings, counter=counter, gate=self.gate)
            try:
                commit = api.resolve(job.repo, job.revision, listing=False).commit
            except HubError as err:
                return _Outcome(Resolution(None, None, err.to_finding()), None,
                                counter.requests)
            finally:
                requests += counter.requests
            resolution = Resolution(commit, "resolved")
        assert resolution.revision is not None
        previous = self.request.previous
        earlier = previous.reusable(job.repo, resolution.revision) if previous else None
        if earlier is not None and (certified := from_row(earlier)) is not None:
            return _Outcome(resolution, certified, requests, reused=True)
        if job.pinned:
            attested, cost = self._attested(job.repo, resolution.revision, "entry")
            if attested is not None:
                return attested
            requests += cost
        key = (job.repo.lower(), resolution.revision)
        with self._lock:
            future = self._by_commit.get(key)
            owner = future is None
            if future is None:
                future = self._by_commit[key] = Future()
        if not owner:  # another reference named the same commit: certified once
            shared = future.result()
            return _Outcome(resolution, shared.certified, requests, shared=True)
        try:
            certified, cost = self._certify(job.repo, resolution.revision)
        except BaseException as exc:
            future.set_exception(exc)
            raise
        outcome = _Outcome(resolution, certified, requests + cost)
        future.set_result(outcome)
        return outcome

    def _attested(self, repo: str, revision: str | None, source: Literal["entry", "resolved"]
                  ) -> tuple[_Outcome | None, int]:
        """--trust-attested: the outcome when a valid trusted attestation accepts the package
        (no header read), else None and the requests the attempt cost."""
        policy = self.request.attestation
        check = policy.accept(repo, revision, self.gate) if policy is not None else None
        if check is None:
            return None, 0
        if not check.accepted or check.commit is None or check.manifest_raw is None:
            return None, check.requests
        return _Outcome(Resolution(check.commit, source), attested_certified(check),
                        check.requests, attested_by=check.signer, by_attestation=True), 0

    def _certify(self, repo: str, commit: str) -> tuple[Certified, int]:
        from meshcert.certify.service import CertRequest, certify_with_view
        from meshcert.certify.view import CertOptions

        options = self.request.options
        policy = self.request.attestation
        report, view = certify_with_view(CertRequest(
            model=f"hf://{repo}@{commit}", hub_gate=self.gate,
            options=CertOptions(runtime_abi=options.runtime_abi, strict=options.strict,
                                verify_sha256=options.verify_sha256, source_identity=True,
                                min_mesh_llm=options.min_mesh_llm),
            extra_findings=policy.findings if policy is not None else None))
        if self.on_certified is not None:
            self.on_certified(repo, commit, report)
        requests = report.transfer.requests if report.transfer else 0
        return summarize(report, package_facts(view), options), requests


def attested_certified(check: AttestedCheck) -> Certified:
    """A package accepted from its attestation: passed as attested, its facts from the
    manifest alone; mesh-llm's refusals were not re-checked, so its verdict stays unknown."""
    from meshcert.catalog.report import Certification

    facts = package_facts(manifest_view(check.manifest_raw or b""))
    warnings = sorted(set(check.warning_codes))
    return Certified(Certification(status="passed", warning_codes=warnings,
                                   warnings=len(warnings)),
                     facts, "unknown", ("verified by attestation: mesh-llm's refusals were not "
                                        "re-checked",))


def _jobs(references: list[PackageReference]) -> tuple[list[_Job], dict[int, int]]:
    """Distinct packages to resolve (repo + recorded revision); reference index -> job."""
    jobs: list[_Job] = []
    index: dict[tuple[str, str | None], int] = {}
    of: dict[int, int] = {}
    for i, ref in enumerate(references):
        pinned = ref.pinned_commit
        key = (ref.repo.lower(), pinned or ref.revision)
        if key not in index:
            index[key] = len(jobs)
            jobs.append(_Job(ref.repo, pinned or ref.revision, pinned is not None))
        jobs[index[key]].references.append(ref)
        of[i] = index[key]
    return jobs, of


def _duplicates(references: list[PackageReference]) -> dict[int, list[PackageReference]]:
    by_repo: dict[str, list[int]] = {}
    for i, ref in enumerate(references):
        by_repo.setdefault(ref.repo.lower(), []).append(i)
    return {i: [references[j] for j in group if j != i]
            for group in by_repo.values() if len(group) > 1 for i in group}


def certify_catalog(source: EntrySource, request: CatalogRequest | None = None, *,
                    progress: CatalogProgress | None = None,
                    on_certified: OnCertified | None = None,
                    settings: HubSettings | None = None) -> CatalogRun:
    """Read the catalog, certify every package reference, and build the catalog report.
    Raises CatalogError when the catalog itself cannot be read; everything else is a row."""
    request = request or CatalogRequest()
    started = utc_now()
    snapshot = source.snapshot()
    entries = [parse_entry(path, raw) for path, raw in sorted(snapshot.files.items())]
    references = [ref for entry in entries for ref in entry.references]
    jobs, job_of = _jobs(references)
    runner = _Runner(request, settings or HubSettings.from_env(),
                     progress or NullCatalogProgress(), on_certified)
    outcomes = runner.run(jobs)
    duplicates = _duplicates(references)
    rows: list[CatalogPackage] = []
    changes: list[Change] = []
    charged: set[int] = set()
    for i, ref in enumerate(references):
        job = job_of[i]
        outcome = outcomes[job]
        row = build_row(ref, outcome.resolution, outcome.certified, request.options,
                        duplicate_of=duplicates.get(i, []))
        row.requests = 0 if job in charged else outcome.requests
        charged.add(job)
        _attach_attestation(row, outcome, request)
        _attach_reports(row, outcome, request)
        if request.previous is not None:
            row.change, row.previous_revision = request.previous.change(
                ref, outcome.resolution.revision, outcome.reused)
            changes.append(row.change)
        rows.append(row)
    loose: list[Finding] = list(snapshot.findings) + [f for e in entries for f in e.findings]
    loose += mixed_version_findings(rows)
    report = CatalogReport(
        status=_status(rows, loose),
        catalog=CatalogSource(input=snapshot.input, kind=snapshot.kind,
                              location=snapshot.location, revision=snapshot.revision,
                              requested_revision=snapshot.requested_revision,
                              entry_files=len(snapshot.files) + len(snapshot.findings)),
        options=request.options, packages=rows, findings=loose,
        counts=_counts(rows, outcomes), tool=tool_info(), started_at=started,
        finished_at=utc_now())
    if request.previous is not None:
        present: set[RowKey] = {row_key(r.entry, r.variant, r.repo) for r in rows}
        report.since = request.previous.summary(changes, present)
    return CatalogRun(report, entries, references, snapshot)


def _attach_attestation(row: CatalogPackage, outcome: _Outcome, request: CatalogRequest
                        ) -> None:
    policy = request.attestation
    signer = outcome.attested_by
    if signer is None and policy is not None and row.revision and outcome.certified:
        signer = policy.signer_of(row.repo, row.revision)
    row.attested, row.attested_only = signer, outcome.by_attestation
    if outcome.by_attestation:
        row.findings.append(finding("attestation_verified", f"hf://{row.repo}@{row.revision}: "
                                    f"verified by attestation, signer {signer}; no header "
                                    "was read", path=row.entry))


def _attach_reports(row: CatalogPackage, outcome: _Outcome, request: CatalogRequest) -> None:
    if outcome.reused and request.previous is not None and row.revision:
        earlier = request.previous.reusable(row.repo, row.revision)
        if earlier is not None:
            row.cert_json, row.cert_html = earlier.cert_json, earlier.cert_html
        return
    # a package accepted from its attestation (--trust-attested) was not certified here: no
    # cert.json / cert.html of it was written, so its row names none
    if request.keep_reports and row.revision and outcome.certified is not None \
            and not outcome.by_attestation:
        row.cert_json, row.cert_html = cert_paths(row.repo, row.revision)


def _status(rows: list[CatalogPackage], loose: list[Finding]) -> OverallStatus:
    statuses: list[str] = [r.status for r in rows]
    if any(f.severity == "error" for f in loose):
        statuses.append("failed")
    return combine_statuses(statuses)


def _counts(rows: list[CatalogPackage], outcomes: dict[int, _Outcome]) -> CatalogCounts:
    return CatalogCounts(
        packages=len(rows), passed=sum(r.status == "passed" for r in rows),
        failed=sum(r.status == "failed" for r in rows),
        incomplete=sum(r.status == "incomplete" for r in rows),
        mesh_llm_refuses=sum(r.mesh_llm_verdict == "refuses" for r in rows),
        unpinned=sum(r.revision_source != "entry" for r in rows),
        certified=sum(1 for o in outcomes.values() if o.certified is not None and not o.reused
                      and not o.shared),
        requests=sum(r.requests for r in rows))


