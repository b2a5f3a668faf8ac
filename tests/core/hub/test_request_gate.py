"""Polite hf:// reads: a cap on requests in flight, and a 429 Retry-After that pauses every
thread, not just the one that was told. Against the in-repo Hub (127.0.0.1), whose per-request
latency keeps requests in flight long enough to overlap.

Times here are lower bounds the client must respect (a Retry-After), never speed claims.
"""

from __future__ import annotations

import hashlib
import threading
import time
from pathlib import Path

import pytest

from meshcert.certify.sources.hub import load_hub_package
from meshcert.certify.view import CertOptions, PackageView
from meshcert.core.hub.gate import RequestGate
from meshcert.core.hub.settings import HubSettings
from meshcert.core.refs import parse_ref
from meshcert.testing import llama_spec, write_package
from tests.support.hub_server import FakeHub

LATENCY_S = 0.03


@pytest.fixture
def package(tmp_path: Path) -> Path:
    return write_package(llama_spec(block_count=12), tmp_path / "pkg").root


@pytest.fixture
def published(hub: FakeHub, package: Path) -> str:
    return f"hf://ns/gated@{hub.publish_dir('ns/gated', package)}"


def same_file(record_path: str, lfs_path: str, package: Path) -> bool:
    """Whether a request is for the file whose storage path (/lfs/<sha256>) is `lfs_path`."""
    if record_path == lfs_path:
        return True
    digest = lfs_path.rsplit("/", 1)[-1]
    return any(record_path.endswith("/" + f.relative_to(package).as_posix())
               for f in package.rglob("*.gguf")
               if hashlib.sha256(f.read_bytes()).hexdigest() == digest)


def load(hub: FakeHub, ref: str, **settings: int) -> PackageView:
    return load_hub_package(parse_ref(ref), options=CertOptions(verify_sha256=False),
                            settings=HubSettings(endpoint=hub.url, **settings))


def header_requests(hub: FakeHub) -> list:
    return sorted((r for r in hub.requests() if r.route in {"resolve", "lfs"} and r.range),
                  key=lambda r: r.arrived)


@pytest.mark.parametrize("cap", [1, 3])
def test_requests_in_flight_never_pass_the_cap(hub: FakeHub, published: str, cap: int) -> None:
    hub.latency_s = LATENCY_S
    hub.reset_counters()
    view = load(hub, published, max_parallel_requests=cap, header_workers=16)
    assert not view.source_findings and len(view.headers) == 15  # 12 layers + 3 shared
    assert hub.max_in_flight <= cap
    if cap > 1:
        assert hub.max_in_flight >= 2  # and the header reads do overlap


def test_the_default_reads_headers_concurrently_within_its_cap(hub: FakeHub,
                                                              published: str) -> None:
    hub.latency_s = LATENCY_S
    hub.reset_counters()
    view = load(hub, published)
    assert len(view.headers) == 15
    assert 2 <= hub.max_in_flight <= HubSettings().max_parallel_requests


def test_a_429_retry_after_pauses_every_thread(hub: FakeHub, published: str,
                                               package: Path) -> None:
    """One header read is told `429, Retry-After: 1`: that thread backs off (the recorded
    sleep), and no other thread starts a request until the second has passed."""
    hub.latency_s = LATENCY_S
    hub.reset_counters()
    fault = hub.inject("lfs", 429, times=1, headers={"Retry-After": "1"})
    view = load(hub, published, max_parallel_requests=1, header_workers=4)
    assert fault.hits == 1 and not view.source_findings and len(view.headers) == 15
    assert 1.0 in hub.sleeps  # the told thread honoured Retry-After
    told = next(r for r in hub.requests("lfs") if r.status == 429)
    later = [r for r in header_requests(hub) if r.arrived > told.arrived]
    retry = [r for r in later if same_file(r.path, told.path, package)]
    others = [r for r in later if not same_file(r.path, told.path, package)]
    assert retry and retry[-1].status == 206
    assert others  # the other fragments were still to be read ...
    assert min(r.arrived for r in others) >= told.arrived + 1.0  # ... after the Retry-After


def test_the_gate_caps_threads_and_holds_the_others() -> None:
    gate = RequestGate(2)
    entered: list[tuple[str, float]] = []
    lock = threading.Lock()

    def work(name: str) -> None:
        with gate.slot():
            with lock:
                entered.append((name, time.monotonic()))
            time.sleep(0.02)

    threads = [threading.Thread(target=work, args=(f"t{i}",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(entered) == 8 and gate.most_in_use == 2 and gate.in_use == 0

    gate.hold(0.3)
    held_at = time.monotonic()
    assert gate.holds == 1
    other = threading.Thread(target=work, args=("after-hold",))
    other.start()
    other.join()
    assert entered[-1][0] == "after-hold" and entered[-1][1] >= held_at + 0.3


def test_the_told_thread_retries_at_once_the_others_wait() -> None:
    gate = RequestGate(4)
    gate.hold(60)  # this thread was told (its own backoff waits, not the gate)
    with gate.slot():  # does not wait the 60 s
        pass
    entered = threading.Event()

    def other() -> None:
        with gate.slot():
            entered.set()

    thread = threading.Thread(target=other)
    thread.start()
    thread.join(timeout=0.5)
    assert thread.is_alive() and not entered.is_set()  # still held
    gate.close()  # releases every waiter
    thread.join(timeout=10)
    assert entered.is_set()


def test_close_releases_threads_waiting_on_a_hold() -> None:
    gate = RequestGate(1)
    gate.hold(60)
    done = threading.Event()

    def work() -> None:
        with gate.slot():
            done.set()

    thread = threading.Thread(target=work)
    thread.start()
    gate.close()
    thread.join(timeout=10)
    assert done.is_set()


def test_a_gate_needs_at_least_one_slot() -> None:
    with pytest.raises(ValueError):
        RequestGate(0)
