"""The Hub fault matrix: every way the Hub can fail, run end to end on an hf:// ref.

Each row of CELLS is one fault: how it is injected into the fake Hub (tests/support/
hub_server.py, plus the answer mutations of hub_faults.py), and what the certification must
say: the overall status and the finding code that names the fault. The real huggingface_hub
client talks to the fake over 127.0.0.1; backoff sleeps are recorded, not slept; timeouts are
cut to a fraction of a second. Every cell is asserted, and every cell also asserts that its
fault was really served (so a fault that silently stopped being injected fails the test).

The rule each cell proves: never `passed` unless everything required was checked. A definite
answer about the ref (not found, gated, disabled, unauthorized) fails; a Hub that could not be
heard out (5xx, 429 that never ends, refused, timed out, truncated, inconsistent) leaves the
result `incomplete` (exit 3). Answers that are wrong but well-formed (garbage bytes in a
range) fail on the findings they cause. Only faults that go away on retry may pass.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from meshcert.certify.engine import INCOMPLETE_CODES
from meshcert.certify.report import CertReport
from meshcert.testing import PackageInfo
from tests.reliability.hub_faults import FaultyHub, MutationKind
from tests.support.hub_packages import REPO, build_package, certify_ref

MANIFEST = "model-package.json"
EXIT = {"passed": 0, "failed": 1, "incomplete": 3}


@dataclass
class Ctx:
    hub: FaultyHub
    sha: str
    monkeypatch: pytest.MonkeyPatch

    @property
    def ref(self) -> str:
        return f"hf://{REPO}@{self.sha}"


Inject = Callable[[Ctx], str | None]  # sets the fault up; may return another ref to certify


def faulted(hub: FaultyHub) -> int:
    """Faulty answers the Hub served: injected ones, or error answers from the repo's state."""
    return hub.injected() or sum(1 for r in hub.requests() if r.status >= 400)


@dataclass(frozen=True)
class HubCell:
    id: str
    fault: str  # what goes wrong, for people
    how: str  # how it is injected into the fake Hub
    inject: Inject
    status: str  # expected overall status
    code: str | None  # the finding code that names it (None: no finding expected)
    exact: bool = True  # the error findings are exactly {code} (else: code among them)
    verify_sha256: bool = False
    sleeps: tuple[float, ...] | None = None  # the backoff sleeps the client must have asked for
    served: Callable[[FaultyHub], int] = field(default=faulted)  # faulty answers it got
    refused: bool = False  # nothing listens: no answer at all is the fault


def _state(change: Callable[[FaultyHub], object]) -> Inject:
    def inject(ctx: Ctx) -> None:
        change(ctx.hub)
    return inject


def _set_repo(**values: object) -> Inject:
    def change(hub: FaultyHub) -> None:
        for name, value in values.items():
            setattr(hub.repos[REPO], name, value)
    return _state(change)


def _fault(route: str, status: int = 503, **kwargs: Any) -> Inject:
    return _state(lambda hub: hub.inject(route, status, **kwargs))


def _faults(*injects: Inject) -> Inject:
    def inject(ctx: Ctx) -> None:
        for one in injects:
            one(ctx)
    return inject


def _mutate(route: str, kind: MutationKind, **kwargs: Any) -> Inject:
    return _state(lambda hub: hub.mutate(route, kind, **kwargs))


def _ref(make: Callable[[Ctx], str]) -> Inject:
    return make


def _closed_port(ctx: Ctx) -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ctx.monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{port}")
    return ctx.ref


def _short_timeout(then: Inject, seconds: float | None = None) -> Inject:
    def inject(ctx: Ctx) -> str | None:
        ctx.monkeypatch.setenv("MESHCERT_HUB_TIMEOUT", str(seconds or CLIENT_TIMEOUT_S))
        return then(ctx)
    return inject


def _publish_without_manifest(ctx: Ctx) -> str:
    files = {p: ctx.hub.file_bytes(REPO, ctx.sha, p)
             for p in ctx.hub.repos[REPO].commits[ctx.sha].files if p != MANIFEST}
    sha = ctx.hub.commit(REPO, files)
    return f"hf://{REPO}@{sha}"


def _tamper_manifest(ctx: Ctx) -> None:
    """Same size, one byte changed inside a string value: still valid JSON."""
    stored = ctx.hub.repos[REPO].commits[ctx.sha].files[MANIFEST]
    data = ctx.hub.blobs[stored.key]
    at = data.index(b'"model_id": "') + len(b'"model_id": "')
    changed = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]
    ctx.hub.blobs["tampered-manifest"] = changed
    stored.key = "tampered-manifest"


def _range_ignored(hub: FaultyHub) -> int:
    return sum(1 for r in hub.requests("lfs") if r.range and r.status == 200)


# Stalls are slow relative to the deadline the test sets (MESHCERT_HUB_TIMEOUT 0.3 s), not
# to the machine's speed: a stalled answer comes only when the fake Hub stops, after the
# certification, so however loaded the machine, the client cannot wait it out. A cell that
# must recover from a stall gives the healthy answers after it a timeout a loaded machine
# still meets (RECOVERY_TIMEOUT_S): its verdict must not depend on the load either.
CLIENT_TIMEOUT_S = 0.3
RECOVERY_TIMEOUT_S = 3.0
STALL_S = 3600.0
RETRY_AFTER = {"Retry-After": "3"}
GATED = {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to model is restricted."}
ENTRY_404 = {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found"}
UNREACHABLE = "hub_unreachable"

CELLS: list[HubCell] = [
    # -- 404 variants ------------------------------------------------------------------------
    HubCell("repo-404", "repository does not exist", "certify hf://ns/does-not-exist@<sha>",
            _ref(lambda c: f"hf://ns/does-not-exist@{c.sha}"), "failed", "hub_repo_not_found"),
    HubCell("revision-404-branch", "branch does not exist", "certify hf://repo@no-such-branch",
            _ref(lambda c: f"hf://{REPO}@no-such-branch"), "failed", "hub_revision_not_found"),
    HubCell("revision-404-sha", "commit does not exist", "certify hf://repo@<40 zeros>",
            _ref(lambda c: f"hf://{REPO}@{'0' * 40}"), "failed", "hub_revision_not_found"),
    HubCell("manifest-entry-404", "listed manifest not served (404 EntryNotFound)",
            "resolve of model-package.json -> 404 X-Error-Code: EntryNotFound, always",
            _fault("resolve", 404, headers=ENTRY_404, times=None, path_contains=MANIFEST),
            "incomplete", UNREACHABLE),
    HubCell("manifest-absent", "no manifest in the repo at that commit",
            "commit without model-package.json",
            _publish_without_manifest, "failed", "missing_manifest", exact=False,
            served=lambda hub: hub.count("model_info")),
    HubCell("storage-404", "LFS storage answers 404",
            "every storage GET -> 404",
            _fault("lfs", 404, times=None), "incomplete", UNREACHABLE),
    # -- authorization -----------------------------------------------------------------------
    HubCell("unauthorized-401", "token missing or wrong (bare 401)",
            "repo requires a token the client does not have",
            _set_repo(required_token="hf_someone_elses_token"), "failed", "hub_unauthorized"),
    HubCell("manifest-401", "401 on the manifest download only",
            "resolve of model-package.json -> 401, always",
            _fault("resolve", 401, times=None, path_contains=MANIFEST),
            "failed", "hub_unauthorized"),
    HubCell("gated-403-files", "gated repo: metadata visible, files refused",
            "repo gated=manual, no accepted token", _set_repo(gated="manual"),
            "failed", "hub_gated"),
    HubCell("gated-403-api", "gated repo refused at model_info",
            "model_info -> 403 X-Error-Code: GatedRepo", _fault("model_info", 403,
                                                                 headers=GATED),
            "failed", "hub_gated"),
    HubCell("disabled", "repository disabled", "repo disabled=True (403, disabled message)",
            _set_repo(disabled=True), "failed", "hub_disabled"),
    # -- rate limits -------------------------------------------------------------------------
    HubCell("429-then-ok", "rate limited twice, Retry-After honoured, then served",
            "model_info -> 429 Retry-After: 3 (x2); one storage GET -> 429 Retry-After: 2",
            _faults(_fault("model_info", 429, times=2, headers=RETRY_AFTER),
                    _fault("lfs", 429, times=1, headers={"Retry-After": "2"})),
            "passed", None, sleeps=(3.0, 3.0, 2.0)),
    HubCell("429-forever", "rate limited on every attempt (Retry-After: 3600)",
            "model_info -> 429 Retry-After: 3600, always",
            _fault("model_info", 429, times=None, headers={"Retry-After": "3600"}),
            "incomplete", UNREACHABLE, sleeps=(60.0,) * 4),
    HubCell("429-forever-storage", "storage rate limits every header read",
            "every storage GET -> 429 Retry-After: 1, always",
            _fault("lfs", 429, times=None, headers={"Retry-After": "1"}),
            "incomplete", UNREACHABLE),
    # -- server errors -----------------------------------------------------------------------
    HubCell("500-model-info", "Hub API 500", "model_info -> 500, always",
            _fault("model_info", 500, times=None), "incomplete", UNREACHABLE,
            sleeps=(1.0, 2.0, 4.0, 8.0)),
    HubCell("503-refs", "refs listing 503", "list_repo_refs -> 503, always",
            _fault("refs", 503, times=None), "incomplete", UNREACHABLE),
    HubCell("503-manifest", "manifest download 503", "resolve of model-package.json -> 503",
            _fault("resolve", 503, times=None, path_contains=MANIFEST), "incomplete",
            UNREACHABLE),
    HubCell("503-storage", "storage 503 on every header read", "every storage GET -> 503",
            _fault("lfs", 503, times=None), "incomplete", UNREACHABLE),
    HubCell("503-then-ok", "two 503s then served", "model_info -> 503 (x2); storage -> 503 (x3)",
            _faults(_fault("model_info", 503, times=2), _fault("lfs", 503, times=3)),
            "passed", None),
    HubCell("500-tree", "model_info has no listing and the tree listing 500s",
            "model_info without siblings; tree -> 500, always",
            _faults(_set_repo(model_info_siblings=False), _fault("tree", 500, times=None)),
            "incomplete", UNREACHABLE),
    # -- transport ---------------------------------------------------------------------------
    HubCell("refused", "connection refused", "HF_ENDPOINT -> a closed port on 127.0.0.1",
            _closed_port, "incomplete", UNREACHABLE, refused=True),
    HubCell("timeout-model-info", "Hub accepts then never answers the API",
            "model_info stalled until the Hub stops, client timeout 0.3 s, always",
            _short_timeout(_fault("model_info", mode="delay", delay_s=STALL_S, times=None)),
            "incomplete", UNREACHABLE),
    HubCell("timeout-manifest", "manifest download stalls",
            "resolve of model-package.json stalled until the Hub stops, client timeout "
            "0.3 s, always",
            _short_timeout(_fault("resolve", mode="delay", delay_s=STALL_S, times=None,
                                  path_contains=MANIFEST)), "incomplete", UNREACHABLE),
    HubCell("timeout-storage", "storage stalls",
            "every storage GET stalled until the Hub stops, client timeout 0.3 s",
            _short_timeout(_fault("lfs", mode="delay", delay_s=STALL_S, times=None)),
            "incomplete", UNREACHABLE),
    HubCell("timeout-once", "one stalled answer, then served",
            "model_info and storage stalled once until the Hub stops, client timeout 3 s",
            _short_timeout(_faults(_fault("model_info", mode="delay", delay_s=STALL_S,
                                          times=1),
                                   _fault("lfs", mode="delay", delay_s=STALL_S, times=1)),
                           RECOVERY_TIMEOUT_S),
            "passed", None),
    HubCell("drop-model-info", "connection dropped before any answer",
            "model_info: connection closed without a response, always",
            _fault("model_info", mode="drop", times=None), "incomplete", UNREACHABLE),
    # -- bodies ------------------------------------------------------------------------------
    HubCell("truncated-model-info", "model_info body cut in half", "model_info truncated, "
            "always", _fault("model_info", mode="truncate", times=None), "incomplete",
            UNREACHABLE),
    HubCell("truncated-manifest", "manifest body cut in half",
            "resolve of model-package.json truncated (connection closed), always",
            _fault("resolve", mode="truncate", times=None, path_contains=MANIFEST),
            "incomplete", UNREACHABLE),
    HubCell("truncated-storage", "fragment ranges cut in half", "every storage GET truncated",
            _fault("lfs", mode="truncate", times=None), "incomplete", UNREACHABLE),
    HubCell("bad-json-model-info", "model_info answers 200 with HTML",
            "model_info -> 200 <html>maintenance</html>",
            _fault("model_info", 200, body=b"<html>maintenance</html>"), "incomplete",
            UNREACHABLE),
    HubCell("no-commit-model-info", "model_info answers without a commit id",
            "model_info -> 200 {id, sha: 'main'}",
            _fault("model_info", 200, body=json.dumps({"id": REPO, "sha": "main"}).encode()),
            "incomplete", UNREACHABLE),
    HubCell("length-long-manifest", "manifest Content-Length larger than the body",
            "Content-Length = body + 4096, then the connection closes, always",
            _mutate("resolve", "length_long", path_contains=MANIFEST), "incomplete",
            UNREACHABLE),
    HubCell("length-short-manifest", "manifest Content-Length half the body",
            "Content-Length = body / 2 (the rest never read), always",
            _mutate("resolve", "length_short", path_contains=MANIFEST), "incomplete",
            UNREACHABLE),
    HubCell("length-long-storage", "fragment Content-Length larger than the body",
            "every storage GET: Content-Length = body + 4096, connection closes (every byte "
            "asked for does arrive: the reader stops at the range's end, before the lie)",
            _mutate("lfs", "length_long"), "passed", None),
    HubCell("slow-loris-storage", "storage trickles every header read (slow loris)",
            "every storage GET: headers, then one byte per 50 ms (a real wait); client "
            "timeout 0.3 s",
            _short_timeout(_mutate("lfs", "trickle")), "incomplete", UNREACHABLE),
    HubCell("length-short-storage", "fragment Content-Length half the body",
            "every storage GET: Content-Length = body / 2",
            _mutate("lfs", "length_short"), "incomplete", UNREACHABLE),
    HubCell("tampered-manifest", "manifest served with one byte changed (same size)",
            "stored manifest bytes differ from the listed git blob id",
            _tamper_manifest, "incomplete", UNREACHABLE,
            served=lambda hub: sum(1 for r in hub.requests("resolve") if MANIFEST in r.path)),
    # -- range requests ----------------------------------------------------------------------
    HubCell("range-ignored", "range request answered 200 with the whole file",
            "storage ignores Range (200 + full body)",
            _state(lambda hub: setattr(hub, "ignore_ranges", True)), "passed", None,
            served=_range_ignored),
    HubCell("range-garbage", "range request answered 206 with random bytes",
            "every storage 206 body replaced by random bytes",
            _mutate("lfs", "range_garbage"), "failed", "gguf_bad_magic", exact=False),
    HubCell("range-200-garbage", "range request answered 200 with a random whole body",
            "every storage range GET -> 200 + random bytes of the file's size",
            _mutate("lfs", "range_full_garbage"), "failed", "gguf_bad_magic", exact=False),
    HubCell("range-wrong-start", "206 whose Content-Range starts elsewhere",
            "every storage 206: Content-Range start + 1",
            _mutate("lfs", "range_wrong_start"), "incomplete", UNREACHABLE),
    HubCell("stream-garbage", "--verify-sha256: storage serves random bytes",
            "every storage 200 body replaced by random bytes (same size)",
            _mutate("lfs", "body_garbage"), "failed", "artifact_sha256_mismatch",
            exact=False, verify_sha256=True),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> PackageInfo:
    return build_package(tmp_path_factory.mktemp("hub-matrix"))


def check_invariants(report: CertReport) -> None:
    """What holds for every cell, whatever the fault."""
    found = {f.code for f in report.findings}
    assert report.status in EXIT
    assert "internal_error" not in found, [f.message for f in report.findings]
    if found & INCOMPLETE_CODES:
        assert report.status != "passed"
    if report.status == "passed":
        assert report.package_gate.status == "passed"
        assert not [f for f in report.findings if f.severity == "error"]
    assert CertReport.model_validate_json(report.to_json()) == report


@pytest.mark.timeout(90)
@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_hub_fault_matrix(cell: HubCell, hub: FaultyHub, package: PackageInfo,
                          monkeypatch: pytest.MonkeyPatch,
                          figures: Callable[..., None]) -> None:
    sha = hub.publish_dir(REPO, package.root)
    ctx = Ctx(hub, sha, monkeypatch)
    ref = cell.inject(ctx) or ctx.ref
    report = certify_ref(ref, verify_sha256=cell.verify_sha256)
    served = cell.served(hub)
    figures(faults_injected=served, hub_requests=hub.count(), status=report.status)
    found = {f.code for f in report.findings}
    errors = {f.code for f in report.findings if f.severity == "error"}
    check_invariants(report)
    if cell.refused:
        assert hub.count() == 0 and "ConnectError" in report.findings[0].message
    else:
        assert served > 0, f"the fault was never served: {hub.requests()}"
    assert report.status == cell.status, report.findings
    if cell.code is None:
        assert not errors, report.findings
    elif cell.exact:
        assert errors == {cell.code}, report.findings
    else:
        assert cell.code in found, report.findings
    if cell.sleeps is not None:
        assert hub.sleeps == list(cell.sleeps)


def test_the_slow_faults_outlast_every_deadline_the_matrix_sets() -> None:
    """Why the timing cells cannot pass on a fast machine nor on a loaded one: a stall lasts
    until the Hub stops, and a trickled read of n bytes takes n gaps while the client's budget
    for it is its timeout plus n bytes at the slowest rate it accepts: for any read of at
    least the 24-byte GGUF preamble the trickle needs more than twice the budget. Load slows
    the fake Hub down, never the client's budget up."""
    from meshcert.core.gguf.reader import DEFAULT_LIMITS
    from meshcert.core.hub.files import MIN_BYTES_PER_S
    from tests.reliability.hub_faults import TRICKLE_GAP_S, TRICKLE_MAX_S

    def budget(n: int) -> float:
        return CLIENT_TIMEOUT_S + n / MIN_BYTES_PER_S

    assert 1000 * (RECOVERY_TIMEOUT_S + budget(DEFAULT_LIMITS.initial_block)) < STALL_S
    assert TRICKLE_GAP_S > 1 / MIN_BYTES_PER_S  # slower than any rate the client accepts
    assert 2 * budget(24) < 24 * TRICKLE_GAP_S  # ... so for every n >= 24 as well
    assert 10 * budget(DEFAULT_LIMITS.initial_block) < TRICKLE_MAX_S


def test_the_matrix_covers_the_issue() -> None:
    """The faults issue 8 names are all rows of the table."""
    ids = {c.id for c in CELLS}
    for needed in ("repo-404", "revision-404-branch", "manifest-entry-404", "unauthorized-401",
                   "gated-403-files", "disabled", "429-then-ok", "429-forever",
                   "500-model-info", "503-storage", "refused", "timeout-model-info",
                   "truncated-manifest", "length-long-manifest", "length-short-manifest",
                   "range-ignored", "range-garbage", "range-200-garbage"):
        assert needed in ids
    assert len(ids) == len(CELLS)
