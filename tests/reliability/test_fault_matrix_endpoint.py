"""The endpoint fault matrix: every runtime gate's status, and the overall status, per fault.

Each row of CELLS is one way an OpenAI-compatible endpoint can misbehave: injected either into
the fake OpenAI server (tests/support/fake_openai.py, correct HTTP with wrong content) or into
a raw TCP server (raw_http.py: resets, trickles, garbage below HTTP). Each cell runs the full
certification (`certify_package`, a real local package + `--api-base`) twice: by default and
with `--strict`. Per-request timeout 0.5 s, so the slow cells stay short.

Columns of `gates`, in order: v1_models, v1_chat_completions, v1_responses (mesh-llm's three:
they decide the status), v1_chat_completions_stream, max_tokens_respected,
deterministic_at_temperature_0, unknown_model_rejected, concurrent_requests (warning-level
unless --strict). P passed, F failed, I incomplete.

The rule each cell proves: never `passed` when a required gate did not pass. A server that
answered badly (reset, garbage, 5xx, malformed stream) fails; one that could not be heard out
(refused, silent, slow loris, past the deadline) is incomplete.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import pytest

from meshcert.certify.report import CertReport
from meshcert.certify.runtime.gates import GATES, MESH_GATES
from meshcert.certify.service import CertRequest, RuntimeRequest, certify_package
from meshcert.testing import PackageInfo, llama_spec, write_package
from tests.reliability.raw_http import Behaviour, RawServer
from tests.support.fake_openai import FakeOpenAI

GATE_ORDER = [name for name, _ in GATES]
LETTER = {"P": "passed", "F": "failed", "I": "incomplete"}
TIMEOUT_S = 0.5
DEADLINE_S = 30.0
# A slow fault is slow relative to the deadlines the test sets, never by wall-clock luck: the
# slow first byte comes only when the fake stops (after the certification), the raw trickles
# and the silent server last until stopped, so no machine load lets a client wait them out.
STALL_S = 3600.0
# A fault of size, not of speed (a 9 MiB answer) gets a per-request timeout no loaded machine
# misses, so only the byte cap can end the answer: with 0.5 s a loaded machine timed out first
# (incomplete instead of failed)
BULK_TIMEOUT_S = 15.0
HUGE = 9 * 1024 * 1024  # past the 8 MiB body cap


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model_id: str
    served: Callable[[], int]  # requests (or connections) the faulty server took


@dataclass(frozen=True)
class EndpointCell:
    id: str
    fault: str
    how: str
    gates: str  # one letter per gate, in GATE_ORDER
    overall: str
    strict: str  # overall status with --strict
    reason: tuple[str, str] | None = None  # (gate, text its details must hold)
    faults: tuple[str, ...] = ()  # FakeOpenAI faults
    raw: Behaviour | None = None  # or: a RawServer behaviour
    refused: bool = False  # or: nothing listens
    api_key: str | None = None  # the key the client sends (server wants "sk-right")
    timeout_s: float = TIMEOUT_S  # the per-request timeout the certification runs with

    def expected_gates(self) -> dict[str, str]:
        letters = self.gates.split()
        assert len(letters) == len(GATE_ORDER), self.id
        return dict(zip(GATE_ORDER, (LETTER[x] for x in letters), strict=True))


# gates: models chat responses | stream max_tokens deterministic unknown_model concurrent
CELLS: list[EndpointCell] = [
    EndpointCell("healthy", "no fault (control)", "FakeOpenAI, no fault",
                 "P P P P P P P P", "passed", "passed"),
    EndpointCell("refused", "connection refused", "a closed port on 127.0.0.1",
                 "I I I I I I I I", "incomplete", "incomplete", ("v1_models", "cannot connect"),
                 refused=True),
    EndpointCell("reset-before-answer", "connection reset before any byte",
                 "raw: read the request, RST", "F F F F I F F F", "failed", "failed",
                 ("v1_models", "connection dropped"), raw="reset"),
    EndpointCell("reset-mid-body", "connection reset mid-body",
                 "raw: headers + 20 of 1000 body bytes, RST", "F F F F I F F F", "failed",
                 "failed", ("v1_models", "dropped mid-body"), raw="reset_mid_body"),
    EndpointCell("closed-at-accept", "connection closed at once", "raw: accept, close",
                 "F F F F I F F F", "failed", "failed", ("v1_models", "connection dropped"),
                 raw="close"),
    EndpointCell("not-http", "answer is not HTTP", "raw: an SSH banner, close",
                 "F F F F I F F F", "failed", "failed", ("v1_models", "connection dropped"),
                 raw="garbage"),
    EndpointCell("huge-headers", "a 1 MiB response header", "raw: one 1 MiB header line",
                 "F F F F I F F F", "failed", "failed", ("v1_models", "connection dropped"),
                 raw="huge_headers"),
    EndpointCell("silent", "accepts, never answers", "raw: read the request, say nothing",
                 "I I I I I I I I", "incomplete", "incomplete", ("v1_models", "timed out"),
                 raw="silent"),
    EndpointCell("slow-loris-headers", "headers trickle one byte per 50 ms forever",
                 "raw: status line, then a header byte every 50 ms", "I I I I I I I I",
                 "incomplete", "incomplete", ("v1_models", "timed out after 0.5 s"),
                 raw="slow_headers"),
    EndpointCell("slow-loris-body", "body trickles one byte per 50 ms forever",
                 "raw: Content-Length 1 MiB, a body byte every 50 ms", "I I I F I I I I",
                 "incomplete", "failed", ("v1_models", "rest of the response body"),
                 raw="slow_body"),
    EndpointCell("slow-first-byte", "POSTs answer only when the server stops",
                 "FakeOpenAI slow_first_byte",
                 "P I I I I I I I", "incomplete", "incomplete",
                 ("v1_chat_completions", "timed out after 0.5 s"), faults=("slow_first_byte",)),
    EndpointCell("http-500", "every POST answers 500", "FakeOpenAI http_500",
                 "P F F F I F F F", "failed", "failed", ("v1_chat_completions", "HTTP 500"),
                 faults=("http_500",)),
    EndpointCell("http-500-echo", "500 whose body echoes the request headers",
                 "FakeOpenAI http_500 + echo_headers", "P F F F I F F F", "failed", "failed",
                 ("v1_responses", "HTTP 500"), faults=("http_500", "echo_headers")),
    EndpointCell("oversized-body", "chat answer of 9 MiB (cap 8 MiB)", "FakeOpenAI huge_body",
                 "P F P P P F P F", "failed", "failed", ("v1_chat_completions", "byte cap"),
                 faults=("huge_body",), timeout_s=BULK_TIMEOUT_S),
    EndpointCell("wrong-model-list", "/v1/models lists other ids only",
                 "FakeOpenAI wrong_models", "F P P P P P P P", "failed", "failed",
                 ("v1_models", "not in data[].id"), faults=("wrong_models",)),
    EndpointCell("responses-404", "/v1/responses missing", "FakeOpenAI responses_404",
                 "P P F P P P P P", "failed", "failed", ("v1_responses", "HTTP 404"),
                 faults=("responses_404",)),
    EndpointCell("wrong-api-key", "the endpoint refuses the key (401)",
                 "FakeOpenAI api_key=sk-right, client sends sk-wrong", "F F F F I F P F",
                 "failed", "failed", ("v1_models", "HTTP 401"), api_key="sk-wrong"),
    EndpointCell("reset-mid-stream", "stream connection closed after one token",
                 "FakeOpenAI drop_mid_stream", "P P P F P P P P", "passed", "failed",
                 ("v1_chat_completions_stream", "connection dropped"),
                 faults=("drop_mid_stream",)),
    EndpointCell("malformed-sse", "one stream event is broken JSON", "FakeOpenAI malformed_sse",
                 "P P P F P P P P", "passed", "failed",
                 ("v1_chat_completions_stream", "malformed JSON"), faults=("malformed_sse",)),
    EndpointCell("missing-done", "stream ends without data: [DONE]",
                 "FakeOpenAI missing_done", "P P P F P P P P", "passed", "failed",
                 ("v1_chat_completions_stream", "[DONE]"), faults=("missing_done",)),
    EndpointCell("role-after-content", "content delta before the role delta",
                 "FakeOpenAI role_after_content", "P P P F P P P P", "passed", "failed",
                 ("v1_chat_completions_stream", "role delta arrived after"),
                 faults=("role_after_content",)),
    EndpointCell("endless-stream", "stream sends keep-alives forever",
                 "FakeOpenAI endless_stream", "P P P I P P P P", "passed", "incomplete",
                 ("v1_chat_completions_stream", "timed out"), faults=("endless_stream",)),
    EndpointCell("unknown-model-accepted", "any model id is served",
                 "FakeOpenAI unknown_model_accepted", "P P P P P P F P", "passed", "failed",
                 ("unknown_model_rejected", "was accepted"),
                 faults=("unknown_model_accepted",)),
    EndpointCell("nondeterministic", "temperature 0 gives different texts",
                 "FakeOpenAI nondeterministic", "P P P P P F P P", "passed", "failed",
                 ("deterministic_at_temperature_0", "texts differ"),
                 faults=("nondeterministic",)),
    EndpointCell("over-max-tokens", "usage reports max_tokens + 3", "FakeOpenAI over_max_tokens",
                 "P P P P F P P P", "passed", "failed",
                 ("max_tokens_respected", "exceeds max_tokens"), faults=("over_max_tokens",)),
]


@pytest.fixture(scope="module")
def package(tmp_path_factory: pytest.TempPathFactory) -> PackageInfo:
    return write_package(llama_spec(block_count=4), tmp_path_factory.mktemp("endpoint") / "pkg")


@contextmanager
def serve(cell: EndpointCell) -> Iterator[Endpoint]:
    if cell.refused:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        yield Endpoint(f"http://127.0.0.1:{port}", "any/model", lambda: 0)  # nobody to ask
    elif cell.raw is not None:
        with RawServer(cell.raw) as raw:
            yield Endpoint(raw.base_url, "any/model", lambda: raw.connections)
    else:
        key = "sk-right" if cell.api_key else None
        with FakeOpenAI(faults=cell.faults, slow_s=STALL_S, huge_bytes=HUGE,
                        api_key=key) as fake:
            yield Endpoint(fake.base_url, fake.model_id, lambda: len(fake.requests))


def check_invariants(report: CertReport) -> None:
    """What holds for every cell, whatever the fault."""
    required = [g for g in report.runtime_gates if g.severity == "required"]
    assert {g.name for g in required} >= set(MESH_GATES)
    if report.status == "passed":
        assert all(g.status == "passed" for g in required), report.runtime_gates
        assert report.package_gate.status == "passed"
    if any(g.status == "failed" for g in required):
        assert report.status == "failed"
    assert CertReport.model_validate_json(report.to_json()) == report


@pytest.mark.timeout(120)  # the hang guard: a client that waits a stall out never finishes
@pytest.mark.parametrize("strict", [False, True], ids=["default", "strict"])
@pytest.mark.parametrize("cell", CELLS, ids=[c.id for c in CELLS])
def test_endpoint_fault_matrix(cell: EndpointCell, strict: bool, package: PackageInfo,
                               figures: Callable[..., None]) -> None:
    with serve(cell) as endpoint:
        report = certify_package(CertRequest(model=str(package.root), runtime=RuntimeRequest(
            api_base=endpoint.base_url, model_id=endpoint.model_id, api_key=cell.api_key,
            timeout_s=cell.timeout_s, deadline_s=DEADLINE_S, concurrency=2, strict=strict)))
        served = endpoint.served()
    figures(faults_injected=0 if cell.id == "healthy" else max(served, 1), status=report.status)
    gates = {g.name: g for g in report.runtime_gates}
    check_invariants(report)
    assert list(gates) == GATE_ORDER
    assert {n: g.status for n, g in gates.items()} == cell.expected_gates(), {
        n: (g.status, g.details) for n, g in gates.items()}
    assert report.status == (cell.strict if strict else cell.overall)
    if cell.reason is not None:
        gate, text = cell.reason
        assert text in (gates[gate].details or ""), gates[gate].details
    assert served > 0 or cell.refused, "the faulty server was never asked"


def test_the_slow_faults_outlast_every_deadline_the_matrix_sets() -> None:
    """Why the slow cells cannot pass on a fast machine nor on a loaded one: a stall outlasts
    the whole run's deadline, and a trickle sends each byte within the per-read timeout (so
    only a whole-request budget stops it) but its promised body outlasts the run. Load slows
    the servers down, never the client's budgets up."""
    from tests.reliability.raw_http import SLOW_BODY_BYTES, TRICKLE_S

    assert 100 * DEADLINE_S < STALL_S
    assert TRICKLE_S < TIMEOUT_S
    assert 100 * DEADLINE_S < SLOW_BODY_BYTES * TRICKLE_S
    assert 20 * TIMEOUT_S < BULK_TIMEOUT_S < DEADLINE_S  # big answers are heard out in time


def test_the_matrix_covers_the_issue() -> None:
    """The endpoint faults issue 8 names are all rows of the table."""
    ids = {c.id for c in CELLS}
    for needed in ("refused", "reset-mid-stream", "malformed-sse", "slow-loris-headers",
                   "slow-loris-body", "http-500", "oversized-body", "missing-done",
                   "wrong-model-list"):
        assert needed in ids
    assert len(ids) == len(CELLS)
