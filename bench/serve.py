"""`meshcert serve` under load, side by side in one run (the figures of issue #43):

1. ingress: 200 deliveries at once (each its own connection, all in flight together) while
   certification jobs run; the time to the 2xx as the sender sees it, p50/p99 (goal: p99 <=
   10 ms);
2. a burst of 1,000 deliveries, 30% of them duplicates and replays of earlier Webhook-Ids,
   over `--repos` pushed packages: jobs and certifications per distinct key (goal: exactly one);
3. memory: the process's RSS after 1,000 and after 10,000 deliveries (unwatched repos, answered
   and forgotten; goal: flat);
4. from a push to the posted comment, for a `--layers`-layer package on the fake Hub at
   `--latency-ms`: vs `models certify hf://...` of the same commit alone (goal <= 1.2x).

    python bench/serve.py
    python bench/serve.py --layers 94 --latency-ms 50 --repos 20

The fake Hub runs in this process, the service as a `meshcert serve` subprocess (so the
sender and the service do not share an interpreter); nothing leaves 127.0.0.1. Times are
indicative on a shared machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests.support package

from tests.support.hub_env import prepare_process_env  # noqa: E402

prepare_process_env()

import httpx  # noqa: E402
import pytest  # noqa: E402

from tests.support.catalog_packages import PackageShelf  # noqa: E402
from tests.support.hub_env import point_at  # noqa: E402
from tests.support.hub_packages import build_package, certify_ref  # noqa: E402
from tests.support.hub_server import FakeHub  # noqa: E402
from tests.support.serve_rig import BOT, SECRET, ServeRig  # noqa: E402


def rss_mb(pid: int) -> float:
    """The service process's resident memory now (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    """The process's CPU time so far, user + system, all its threads (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def push_body(repo: str, n: int) -> bytes:
    return json.dumps({
        "event": {"action": "update", "scope": "repo.content"},
        "repo": {"type": "model", "name": repo, "headSha": f"{n:040x}"},
        "updatedRefs": [{"ref": "refs/heads/main", "oldSha": None, "newSha": f"{n:040x}"}],
        "webhook": {"id": "bench", "version": 3}}).encode()


async def post_raw(host: str, port: int, delivery: str, body: bytes) -> float:
    """One delivery on its own connection, as plain HTTP/1.1 over asyncio streams (httpx's
    pool costs more than the server with hundreds of connections at once); seconds to the
    whole answer."""
    started = time.perf_counter()
    reader, writer = await asyncio.open_connection(host, port)
    head = (f"POST /webhook HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json"
            f"\r\nX-Webhook-Secret: {SECRET}\r\nWebhook-Id: {delivery}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    writer.write(head.encode() + body)
    await writer.drain()
    status = await reader.readline()
    answer = await reader.read()  # to the close
    writer.close()
    code = int(status.split()[1])
    assert code < 300, (code, answer[-300:])
    return time.perf_counter() - started


async def deliver_all(url: str, bodies: list[tuple[str, bytes]]) -> list[float]:
    """Every delivery at once, each on its own connection; seconds to each answer."""
    parts = httpx.URL(url)
    return list(await asyncio.gather(*(post_raw(parts.host, parts.port or 80, d, b)
                                       for d, b in bodies)))


def pct(values: list[float], q: float) -> float:
    return sorted(values)[min(len(values) - 1, int(q * len(values)))] * 1000


def ingress(rig: ServeRig, shelf: PackageShelf, hub: FakeHub, tag: str = ""
            ) -> tuple[float, float, int, float]:
    """p50 and p99 (ms), the jobs running, and the service process's CPU per delivery (ms:
    its event loop's share of the 200, the floor under the 200th answer's wait)."""
    assert rig.process is not None
    hub.publish_dir("meshllm/busy-layers", shelf.v2("busy" + tag))  # a job runs meanwhile
    bodies = [(f"ingress{tag}-{i}", push_body("meshllm/quiet", i)) for i in range(200)]
    before = cpu_s(rig.process.pid)
    times = asyncio.run(deliver_all(f"{rig.url}/webhook", bodies))
    cpu_ms = (cpu_s(rig.process.pid) - before) / len(bodies) * 1000
    running = len(rig.status()["running"])
    return pct(times, 0.5), pct(times, 0.99), running, cpu_ms


def burst(rig: ServeRig, repos: list[str]) -> dict[str, Any]:
    distinct = [(f"burst-{i}", push_body(repos[i % len(repos)], i)) for i in range(700)]
    rng = random.Random(43)
    dupes = [rng.choice(distinct) for _ in range(300)]
    mixed = distinct + dupes
    rng.shuffle(mixed)
    before = rig.status()["counts"]
    own = len(rig.hub.webhooks.deliveries)  # the service's uploads are delivered too
    for start in range(0, len(mixed), 100):
        asyncio.run(deliver_all(f"{rig.url}/webhook", mixed[start:start + 100]))
    after = rig.settle(600)["counts"]
    own = len(rig.hub.webhooks.deliveries) - own
    return {"deliveries": after["deliveries"] - before["deliveries"] - own,
            "jobs": after["jobs"] - before["jobs"],
            "certifications": after["certifications"] - before["certifications"],
            "keys": len(repos)}


def memory(rig: ServeRig) -> tuple[float, float]:
    assert rig.process is not None
    marks = []
    for start in range(0, 10_000, 200):
        bodies = [(f"mem-{i}", push_body("someone/unwatched", i))
                  for i in range(start, start + 200)]
        asyncio.run(deliver_all(f"{rig.url}/webhook", bodies))
        if start + 200 in (1_000, 10_000):
            marks.append(rss_mb(rig.process.pid))
    return marks[0], marks[1]


def push_to_comment(rig: ServeRig, hub: FakeHub, work: Path, layers: int,
                    latency_s: float) -> tuple[float, float, float]:
    root = build_package(work, "big", layers=layers).root
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.rglob("*")) if p.is_file()}
    hub.publish_dir("meshllm/base-layers", root)
    head = hub.commit("meshllm/base-layers", files, branch=None, title="PR head")
    rig.settle(600)  # main's own job (the publish above) is done before the clock starts
    certify_ref(f"hf://meshllm/base-layers@{head}")  # warm-up
    hub.latency_s = latency_s
    started = time.perf_counter()
    report = certify_ref(f"hf://meshllm/base-layers@{head}")
    in_process = time.perf_counter() - started
    assert report.status == "passed", report.status
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "meshcert", "models", "certify",
                           f"hf://meshllm/base-layers@{head}", "--package-only"], env=env,
                          capture_output=True, text=True, check=False)
    command = time.perf_counter() - started
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    hub.reset_counters()
    started = time.perf_counter()
    ref = hub.open_pull_request("meshllm/base-layers", head)
    num = int(ref.rsplit("/", 1)[1])
    repo = hub.get_repo("meshllm/base-layers")
    assert repo is not None
    discussion = next(d for d in repo.discussions if d.num == num)
    while not any(c["author"] == BOT for c in discussion.comments):
        time.sleep(0.01)
    served = time.perf_counter() - started
    hub.latency_s = 0.0
    return in_process, command, served


def main() -> None:
    import logging

    logging.getLogger("meshcert.serve").setLevel(logging.ERROR)  # the figures, not the log
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=94)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--repos", type=int, default=20)
    parser.add_argument("--log", help="Keep the service's log here.")
    parser.add_argument("--only", choices=["ingress"], help="Measure only this figure "
                        "(ingress: 200 deliveries at once, three rounds).")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meshcert-bench-serve-") as tmp, \
            pytest.MonkeyPatch.context() as mp:
        work = Path(tmp)
        hub = FakeHub().start()
        sleeps: list[float] = []
        point_at(mp, hub.url, work / "hf-home", sleeps)
        rig = ServeRig(hub, work / "serve")
        rig.write_config(watch=["meshllm/*-layers"], budgets={"max_jobs": 2})
        shelf = PackageShelf(work / "packages")
        repos = [f"meshllm/pkg{i:02d}-layers" for i in range(args.repos)]
        root = shelf.v2()
        for repo in repos:
            hub.publish_dir(repo, root)
        try:
            log = Path(args.log).resolve() if args.log else work / "serve.log"
            rig.spawn(log)
            if rig.process is not None:  # the service in its own process (not this GIL)
                rig.hook()
                p50, p99, running, cpu_ms = ingress(rig, shelf, hub)
                print(f"1. ingress, 200 deliveries at once ({running} job(s) running): "
                      f"p50 {p50:.1f} ms, p99 {p99:.1f} ms (goal p99 <= 10 ms); the "
                      f"service's CPU {cpu_ms:.2f} ms a delivery (x 200 = {cpu_ms * 200:.0f} "
                      "ms on one event loop)")
                if args.only == "ingress":
                    for again in range(2):
                        rig.settle(600)
                        p50, p99, running, cpu_ms = ingress(rig, shelf, hub, f"-{again}")
                        print(f"1. again ({running} job(s) running): p50 {p50:.1f} ms, "
                              f"p99 {p99:.1f} ms; CPU {cpu_ms:.2f} ms a delivery")
                    return
                rig.settle(600)
                counts = burst(rig, repos)
                print(f"2. 1,000 deliveries (30% duplicates/replays) over {counts['keys']} "
                      f"keys: {counts['deliveries']} distinct Webhook-Ids recorded, "
                      f"{counts['jobs']} job(s), "
                      f"{counts['certifications']} certification(s) (goal: one per key)")
                at_1k, at_10k = memory(rig)
                print(f"3. memory: the service's RSS {at_1k:.0f} MB after 1,000 deliveries, "
                      f"{at_10k:.0f} MB after 10,000 (goal: flat)")
                in_process, command, served = push_to_comment(
                    rig, hub, work, args.layers, args.latency_ms / 1000)
                print(f"4. {args.layers}-layer package at {args.latency_ms:g} ms a request: "
                      f"`meshcert models certify hf://... --package-only` {command:.2f} s "
                      f"(its certification in a warm process {in_process:.2f} s), pull "
                      f"request to posted comment {served:.2f} s ({served / command:.2f}x the "
                      f"command, {served / in_process:.2f}x the warm certification; goal "
                      "<= 1.2x)")
        finally:
            if rig.process is not None:
                rig.process.terminate()
                rig.process.wait(60)
            hub.stop()


if __name__ == "__main__":
    main()
