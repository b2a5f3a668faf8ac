"""Every runtime gate against the in-repo fake server: all pass, then each fault named."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable

import pytest

from meshcert.certify.runtime.gates import GATES, MESH_GATES, run_runtime_gates
from meshcert.certify.service import CertRequest, RuntimeRequest, certify_package
from tests.certify.runtime.conftest import free_port, run_against
from tests.support.fake_openai import FakeOpenAI

ALL_GATES = [name for name, _ in GATES]
FakeFactory = Callable[..., FakeOpenAI]


@pytest.mark.parametrize("line_ending", ["\r\n", "\n"])
def test_a_correct_server_passes_every_gate_with_measurements(
        fake_server: FakeFactory, line_ending: str) -> None:
    fake = fake_server(line_ending=line_ending)
    gates = run_against(fake.base_url, fake.model_id, concurrency=6)
    assert list(gates) == ALL_GATES
    assert {n: g.status for n, g in gates.items()} == dict.fromkeys(ALL_GATES, "passed")
    for name in ALL_GATES:
        assert gates[name].severity == ("required" if name in MESH_GATES else "warning")
    for name in ("v1_models", "v1_chat_completions", "v1_responses"):
        assert gates[name].http_status == 200 and gates[name].latency_ms is not None
    stream = gates["v1_chat_completions_stream"]
    assert stream.ttft_ms is not None and 0 < stream.ttft_ms <= stream.latency_ms  # type: ignore[operator]
    assert stream.completion_tokens == 2 and stream.tokens_per_s
    assert stream.measurements["completion_tokens_source"] == "usage"
    assert {"itl_mean_ms", "itl_p50_ms", "itl_p95_ms"} <= set(stream.measurements)
    concurrent = gates["concurrent_requests"].measurements
    assert concurrent["requests"] == 6 and concurrent["failures"] == 0
    assert all(concurrent[k] is not None for k in ("p50_ms", "p95_ms", "max_ms"))
    assert gates["max_tokens_respected"].measurements["chat_completion_tokens"] == 2


def test_requests_are_the_ones_the_spec_names(fake_server: FakeFactory) -> None:
    fake = fake_server()
    run_against(fake.base_url, fake.model_id, prompt="Hi there", max_tokens=3)
    by_path: dict[str, list[object]] = {}
    for r in fake.requests:
        by_path.setdefault(f"{r.method} {r.path}", []).append(r.body)
    assert by_path["GET /v1/models"] == [None]
    chat = by_path["POST /v1/chat/completions"]
    assert chat[0] == {"model": fake.model_id,
                       "messages": [{"role": "user", "content": "Hi there"}],
                       "max_tokens": 3, "stream": False}
    assert by_path["POST /v1/responses"] == [{"model": fake.model_id, "input": "Hi there",
                                              "max_output_tokens": 3}]
    assert not any("authorization" in r.headers for r in fake.requests)


# fault -> (gate, status, reason in details)
FAULTS = [
    ("drop_mid_stream", "v1_chat_completions_stream", "failed", "connection dropped"),
    ("malformed_sse", "v1_chat_completions_stream", "failed", "malformed JSON"),
    ("missing_done", "v1_chat_completions_stream", "failed", "without data: [DONE]"),
    ("role_after_content", "v1_chat_completions_stream", "failed", "role delta arrived after"),
    ("endless_stream", "v1_chat_completions_stream", "incomplete", "timed out after 0.5 s"),
    ("wrong_models", "v1_models", "failed", "not in data[].id"),
    ("http_500", "v1_chat_completions", "failed", "HTTP 500"),
    ("http_500", "v1_responses", "failed", "HTTP 500"),
    ("slow_first_byte", "v1_chat_completions", "incomplete", "timed out after 0.5 s"),
    ("huge_body", "v1_chat_completions", "failed", "byte cap"),
    ("unknown_model_accepted", "unknown_model_rejected", "failed", "was accepted"),
    ("nondeterministic", "deterministic_at_temperature_0", "failed", "texts differ"),
    ("over_max_tokens", "max_tokens_respected", "failed", "exceeds max_tokens 2"),
    ("responses_404", "v1_responses", "failed", "HTTP 404"),
]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("fault", "gate", "status", "reason"), FAULTS,
                         ids=[f"{f}-{g}" for f, g, _, _ in FAULTS])
def test_each_fault_is_named_by_its_gate_without_hanging(
        fake_server: FakeFactory, fault: str, gate: str, status: str, reason: str) -> None:
    fake = fake_server(faults=[fault], slow_s=10.0)
    timeout = 0.5
    started = time.monotonic()
    gates = run_against(fake.base_url, fake.model_id, timeout_s=timeout)
    elapsed = time.monotonic() - started
    assert list(gates) == ALL_GATES
    assert gates[gate].status == status, gates[gate]
    assert reason in (gates[gate].details or "")
    # hang guard only: at most ~8 sequential request budgets, doubled for slack
    assert elapsed < timeout * 16 + 5


@pytest.mark.parametrize("fault", ["drop_mid_stream", "malformed_sse", "missing_done",
                                   "role_after_content", "unknown_model_accepted",
                                   "nondeterministic"])
def test_one_fault_leaves_the_other_gates_passing(fake_server: FakeFactory, fault: str) -> None:
    fake = fake_server(faults=[fault])
    gates = run_against(fake.base_url, fake.model_id)
    failed = {n for n, g in gates.items() if g.status != "passed"}
    assert len(failed) == 1, {n: gates[n].details for n in failed}


def test_an_unreachable_endpoint_makes_every_gate_incomplete_quickly() -> None:
    base = f"http://127.0.0.1:{free_port()}"
    started = time.monotonic()
    gates = run_against(base, "any/model", timeout_s=30.0)
    assert time.monotonic() - started < 30  # did not wait a timeout per gate
    assert {g.status for g in gates.values()} == {"incomplete"}
    assert "cannot connect" in (gates["v1_models"].details or "")
    for name in ALL_GATES[1:]:
        assert (gates[name].details or "").startswith("not run: endpoint unreachable")


@pytest.mark.timeout(60)
def test_a_server_that_accepts_but_never_answers_times_out_every_gate() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)  # connections complete in the backlog; nothing ever answers
        base = f"http://127.0.0.1:{listener.getsockname()[1]}"
        gates = run_against(base, "any/model", timeout_s=0.3, concurrency=2)
    assert gates["v1_models"].status == "incomplete"
    assert "timed out" in (gates["v1_models"].details or "")
    assert {g.status for g in gates.values()} == {"incomplete"}


@pytest.mark.timeout(60)
def test_the_overall_deadline_stops_the_run(fake_server: FakeFactory) -> None:
    fake = fake_server(faults=["slow_first_byte"], slow_s=10.0)
    started = time.monotonic()
    gates = run_against(fake.base_url, fake.model_id, timeout_s=30.0, deadline_s=1.0)
    assert time.monotonic() - started < 10
    assert gates["v1_models"].status == "passed"
    assert "overall deadline of 1 s" in (gates["v1_chat_completions"].details or "")
    assert gates["v1_chat_completions"].status == "incomplete"
    assert all("deadline" in (gates[n].details or "") for n in ALL_GATES[1:])


def test_a_body_past_the_cap_fails_without_reading_it_all(fake_server: FakeFactory) -> None:
    fake = fake_server(faults=["huge_body"], huge_bytes=256 * 1024)
    gates = run_against(fake.base_url, fake.model_id, max_body_bytes=64 * 1024)
    assert gates["v1_chat_completions"].status == "failed"
    assert "exceeds the 65536 byte cap" in (gates["v1_chat_completions"].details or "")
    assert gates["v1_models"].status == "passed"


def test_strict_makes_the_extended_gates_required(fake_server: FakeFactory) -> None:
    fake = fake_server()
    gates = run_against(fake.base_url, fake.model_id, strict=True)
    assert {g.severity for g in gates.values()} == {"required"}


@pytest.mark.parametrize(("strict", "expected"), [(False, "passed"), (True, "failed")])
def test_only_mesh_gates_decide_the_status_unless_strict(
        fake_server: FakeFactory, packages: object, strict: bool, expected: str) -> None:
    fake = fake_server(faults=["nondeterministic"])
    info = packages.build("llama")  # type: ignore[attr-defined]
    report = certify_package(CertRequest(model=str(info.root), runtime=RuntimeRequest(
        api_base=fake.base_url, model_id=fake.model_id, timeout_s=5, strict=strict)))
    assert report.package_gate.status == "passed"
    assert report.status == expected
    assert [g.name for g in report.runtime_gates] == ALL_GATES


def test_a_crashing_gate_is_incomplete_not_passed(
        fake_server: FakeFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    import meshcert.certify.runtime.gates as gates_module

    def boom(ctx: object) -> None:
        raise RuntimeError("kaboom")

    patched = tuple((n, boom if n == "v1_responses" else f) for n, f in gates_module.GATES)
    monkeypatch.setattr(gates_module, "GATES", patched)
    fake = fake_server()
    gates = run_against(fake.base_url, fake.model_id)
    assert gates["v1_responses"].status == "incomplete"
    assert gates["v1_responses"].details == "internal error: RuntimeError: kaboom"


# -- the API key ----------------------------------------------------------------------------
KEY = "sk-meshcert-TEST-9f8e7d6c5b4a"


def test_the_key_goes_as_bearer_only_and_is_accepted(fake_server: FakeFactory) -> None:
    fake = fake_server(api_key=KEY)
    gates = run_against(fake.base_url, fake.model_id, api_key=KEY)
    assert {g.status for g in gates.values()} == {"passed"}
    assert fake.requests and all(r.headers.get("authorization") == f"Bearer {KEY}"
                                 for r in fake.requests)
    for r in fake.requests:
        others = {k: v for k, v in r.headers.items() if k != "authorization"}
        assert KEY not in json.dumps(others) and KEY not in json.dumps(r.body)


def test_a_server_echoing_the_key_in_errors_never_gets_it_into_the_gates(
        fake_server: FakeFactory) -> None:
    fake = fake_server(api_key=KEY, faults=["http_500", "echo_headers"])
    gates = run_against(fake.base_url, fake.model_id, api_key=KEY)
    dumped = json.dumps([g.model_dump() for g in gates.values()])
    assert KEY[:10] not in dumped  # not even a prefix cut off by a clipped snippet
    assert "Bearer ***" in (gates["v1_chat_completions"].details or "")


def test_a_wrong_key_is_a_named_401_and_the_wrong_key_is_not_echoed(
        fake_server: FakeFactory) -> None:
    fake = fake_server(api_key=KEY, faults=["echo_headers"])
    wrong = "sk-wrong-0123456789"
    gates = run_against(fake.base_url, fake.model_id, api_key=wrong)
    assert gates["v1_models"].status == "failed"
    assert (gates["v1_models"].details or "").startswith("HTTP 401")
    assert wrong not in json.dumps([g.model_dump() for g in gates.values()])


def test_a_key_that_cannot_be_a_header_is_refused_without_leaking(
        fake_server: FakeFactory) -> None:
    fake = fake_server()
    bad = "sk-bad\nInjected: yes"
    gates = run_against(fake.base_url, fake.model_id, api_key=bad)
    assert {g.status for g in gates.values()} == {"incomplete"}
    assert "not a valid header value" in (gates["v1_models"].details or "")
    assert "sk-bad" not in json.dumps([g.model_dump() for g in gates.values()])
    assert fake.requests == []


def test_progress_is_reported_per_gate(fake_server: FakeFactory) -> None:
    calls: list[tuple[str, object]] = []
    lock = threading.Lock()

    class Recorder:
        def begin(self, label: str, total: int | None) -> None:
            calls.append(("begin", total))

        def advance(self, amount: int) -> None:
            with lock:
                calls.append(("advance", amount))

        def end(self) -> None:
            calls.append(("end", None))

    fake = fake_server()
    run_runtime_gates(RuntimeRequest(api_base=fake.base_url, model_id=fake.model_id,
                                     timeout_s=5), progress=Recorder())
    assert calls[0] == ("begin", len(GATES)) and calls[-1] == ("end", None)
    assert calls.count(("advance", 1)) == len(GATES)


def test_credentials_in_the_api_base_are_refused(fake_server: FakeFactory) -> None:
    fake = fake_server()
    base = fake.base_url.replace("http://", "http://user:hunter2@")
    gates = run_against(base, fake.model_id)
    assert {g.status for g in gates.values()} == {"incomplete"}
    assert "credentials in the API base URL" in (gates["v1_models"].details or "")
    assert "hunter2" not in json.dumps([g.model_dump() for g in gates.values()])
    assert fake.requests == []


def test_the_key_never_reaches_the_logs(fake_server: FakeFactory,
                                        caplog: pytest.LogCaptureFixture) -> None:
    fake = fake_server(api_key=KEY, faults=["http_500", "echo_headers"])
    with caplog.at_level(logging.DEBUG):
        run_against(fake.base_url, fake.model_id, api_key=KEY)
    assert caplog.records  # httpx/httpcore did log at DEBUG
    assert KEY not in caplog.text
    assert all(KEY not in str(r.args) for r in caplog.records)
