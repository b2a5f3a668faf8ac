"""What does the harness add per request? The chat gate vs a bare httpx request, side by side.

For each endpoint (the in-repo fake server, and with `--llama` a real llama-cpp-python server on
a tiny random-weight GGUF) this runs N rounds; each round times one `v1_chat_completions` gate
call (the real gate function on a warm RuntimeClient, as a certification run makes it) and one
bare `httpx.Client.post` + `.json()` of the same body to the same URL, alternating which goes
first. It prints the medians, p95s, and the overhead per request (ms and ratio).

    python bench/smoke_overhead.py [--rounds 300] [--llama]
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from meshcert.certify.runtime.client import Deadline, RuntimeClient  # noqa: E402
from meshcert.certify.runtime.gates import GateContext, gate_v1_chat_completions  # noqa: E402
from meshcert.certify.runtime.stats import percentile  # noqa: E402
from meshcert.certify.service import RuntimeRequest  # noqa: E402
from meshcert.core.redact import Redactor  # noqa: E402


def _timed(func: Callable[[], object]) -> float:
    started = time.perf_counter()
    func()
    return (time.perf_counter() - started) * 1000


def measure(base: str, model_id: str, rounds: int, warmup: int = 10) -> tuple[list[float],
                                                                                list[float]]:
    runtime = RuntimeRequest(api_base=base, model_id=model_id, timeout_s=60.0)
    redactor = Redactor(None)
    with RuntimeClient(base, api_key=None, timeout_s=60.0, deadline=Deadline(3600),
                       redactor=redactor) as client, httpx.Client(timeout=60.0) as bare:
        ctx = GateContext(runtime=runtime, client=client, redactor=redactor)
        body = ctx.chat_body()
        url = f"{base}/v1/chat/completions"

        def harness() -> None:
            gate = gate_v1_chat_completions(ctx)
            if gate.http_status != 200:  # a blank random-model reply may fail it: still timed
                raise SystemExit(f"chat gate got no answer from {base}: {gate.details}")

        def plain() -> None:
            answer = bare.post(url, json=body)
            answer.raise_for_status()
            answer.json()

        for _ in range(warmup):
            harness()
            plain()
        gate_ms: list[float] = []
        bare_ms: list[float] = []
        for i in range(rounds):
            if i % 2:
                gate_ms.append(_timed(harness))
                bare_ms.append(_timed(plain))
            else:
                bare_ms.append(_timed(plain))
                gate_ms.append(_timed(harness))
    return gate_ms, bare_ms


def report(label: str, gate_ms: list[float], bare_ms: list[float]) -> None:
    g50, b50 = statistics.median(gate_ms), statistics.median(bare_ms)
    g95, b95 = percentile(gate_ms, 95) or 0.0, percentile(bare_ms, 95) or 0.0
    paired = statistics.median(g - b for g, b in zip(gate_ms, bare_ms, strict=True))
    print(f"{label}: {len(gate_ms)} rounds, interleaved")
    print(f"  {'':18}{'median ms':>12}{'p95 ms':>12}")
    print(f"  {'chat gate':18}{g50:12.3f}{g95:12.3f}")
    print(f"  {'bare httpx':18}{b50:12.3f}{b95:12.3f}")
    print(f"  overhead per request: {g50 - b50:+.3f} ms (median of paired differences "
          f"{paired:+.3f} ms), ratio {g50 / b50:.2f}x")


@contextmanager
def fake_server() -> Iterator[tuple[str, str]]:
    """The fake server in its own process, so it does not share the client's GIL."""
    root = Path(__file__).resolve().parent.parent
    process = subprocess.Popen([sys.executable, "-m", "tests.support.fake_openai"], cwd=root,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        base, model = process.stdout.readline().split()
        yield base, model
    finally:
        if process.stdin is not None:
            process.stdin.close()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def llama_server() -> Iterator[tuple[str, str]]:
    from meshcert.testing import llama_spec
    from meshcert.testing.writer import write_source_gguf

    with tempfile.TemporaryDirectory(prefix="meshcert-bench-") as tmp:
        spec = llama_spec()
        gguf = write_source_gguf(spec, Path(tmp) / spec.source_file)
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        alias = "bench/tiny-llama"
        err_path = Path(tmp) / "server.stderr"
        with open(err_path, "wb") as err:
            process = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host",
                 "127.0.0.1", "--port", str(port), "--model_alias", alias, "--n_ctx", "256",
                 "--seed", "1234"], stdout=subprocess.DEVNULL, stderr=err,
                stdin=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        try:
            ends = time.monotonic() + 120
            while True:
                if process.poll() is not None:
                    raise SystemExit("llama_cpp.server exited:\n"
                                     + err_path.read_text(errors="replace")[-3000:])
                try:
                    if httpx.get(f"{base}/v1/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > ends:
                    raise SystemExit("llama_cpp.server not ready within 120 s")
                time.sleep(0.25)
            yield base, alias
        finally:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--llama", action="store_true", help="also bench a llama.cpp server")
    args = parser.parse_args()
    with fake_server() as (base, model):
        report("fake server (stdlib, own process)", *measure(base, model, args.rounds))
    if args.llama:
        with llama_server() as (base, model):
            report("llama-cpp-python server (tiny GGUF)", *measure(base, model, args.rounds))


if __name__ == "__main__":
    main()
