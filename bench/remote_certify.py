"""Remote certification cost: meshcert on an hf:// ref vs downloading the package.

Generates real layer packages (4, 32 and 94 layers by default; small tensors; each as a v1
package and as the same model in package v2, side by side), publishes each
to the test suite's fake Hub on 127.0.0.1 (in a child process, so its CPU is not billed to the
client), and measures on the server side, per package:

- meshcert (default, Hub-attested hashes): one model_info, one refs, manifest + README, GGUF
  header ranges per fragment;
- meshcert --verify-sha256: the same, plus every artifact streamed through SHA-256;
- naive: what a downloader does, `hf_hub_download` of every file (a HEAD per file plus the
  full download, through the LFS redirect).

    python bench/remote_certify.py
    python bench/remote_certify.py --layers 4 32 --n-embd 256 --n-ff 1024
    python bench/remote_certify.py --latency-ms 50     # every request answered 50 ms late

With `--latency-ms`, the fake Hub delays every request as a far-away Hub would, and the wall
time is also given in round trips (seconds / latency): the fixed requests run in sequence, the
header ranges concurrently (capped), so the count stays near-flat in the number of layers.
Goal: a 94-layer package in at most 12 round trips.

Nothing leaves 127.0.0.1. Request and byte counts are deterministic; times are indicative.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests.support package

from tests.support.hub_env import prepare_process_env  # noqa: E402

prepare_process_env()  # before huggingface_hub is imported

from meshcert.certify.service import CertRequest, certify_package  # noqa: E402
from meshcert.certify.view import CertOptions  # noqa: E402
from meshcert.testing import llama_spec, write_package, write_source_gguf  # noqa: E402
from meshcert.writer.write import write_file  # noqa: E402
from tests.support.hub_server import FakeHub  # noqa: E402


def _serve(conn: Any, latency_s: float) -> None:
    with FakeHub(latency_s=latency_s) as hub:
        conn.send(hub.url)
        while True:
            name, args = conn.recv()
            if name == "stop":
                return
            conn.send(getattr(hub, name)(*args))


class HubProcess:
    """The fake Hub in a child process, so that its request handling does not take CPU (and
    the GIL) from the client being measured, as a real, remote Hub would not."""

    def __init__(self, latency_s: float) -> None:
        ctx = multiprocessing.get_context("fork")
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_serve, args=(child, latency_s), daemon=True)
        self._proc.start()
        self.url: str = self._conn.recv()

    def _call(self, name: str, *args: Any) -> Any:
        self._conn.send((name, args))
        return self._conn.recv()

    def publish_dir(self, repo: str, root: Path) -> str:
        return str(self._call("publish_dir", repo, root))

    def reset_counters(self) -> None:
        self._call("reset_counters")

    def count(self, route: str | None = None) -> int:
        return int(self._call("count", route))

    def bytes_sent(self, route: str | None = None) -> int:
        return int(self._call("bytes_sent", route))

    def __enter__(self) -> HubProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self._conn.send(("stop", ()))
        self._proc.join(timeout=10)


@dataclass
class Row:
    fmt: str
    layers: int
    files: int
    package_bytes: int
    mode: str
    requests: int
    bytes_sent: int
    seconds: float
    status: str = ""


def _measure(hub: HubProcess, action: object) -> tuple[int, int, float, object]:
    hub.reset_counters()
    started = time.perf_counter()
    result = action()  # type: ignore[operator]
    elapsed = time.perf_counter() - started
    return hub.count(), hub.bytes_sent("resolve") + hub.bytes_sent("lfs"), elapsed, result


def _naive(hub: HubProcess, repo: str, sha: str, paths: list[str], cache: Path) -> None:
    from huggingface_hub import hf_hub_download

    for path in paths:
        hf_hub_download(repo, path, revision=sha, cache_dir=cache, endpoint=hub.url)
    shutil.rmtree(cache, ignore_errors=True)


def _write(fmt: str, work: Path, layers: int, n_embd: int, n_ff: int) -> Path:
    """The same model as a v1 package or as a v2 package (carrier + shared/common.gguf)."""
    spec = llama_spec(block_count=layers, n_embd=n_embd, n_ff=n_ff)
    if fmt == "v1":
        return write_package(spec, work / f"pkg-{layers}-v1").root
    source = write_source_gguf(spec, work / f"src-{layers}" / spec.source_file)
    root = write_file(source, work / f"pkg-{layers}-v2", model_id=spec.model_id).root
    shutil.rmtree(source.parent)
    return root


def bench_package(hub: HubProcess, work: Path, layers: int, n_embd: int, n_ff: int,
                  rounds: int, fmt: str = "v1") -> list[Row]:
    root = _write(fmt, work, layers, n_embd, n_ff)
    repo = f"bench/tiny-llama-{layers}-{fmt}"
    sha = hub.publish_dir(repo, root)
    paths = sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())
    size = sum((root / p).stat().st_size for p in paths)
    shutil.rmtree(root)  # served from memory from here on
    rows: list[Row] = []
    for mode, verify in (("meshcert", False), ("meshcert --verify-sha256", True)):
        request = CertRequest(model=f"hf://{repo}@{sha}",
                              options=CertOptions(verify_sha256=verify))
        if not rows:
            certify_package(request)  # warm-up: imports, connection set-up, code paths
        times: list[float] = []
        for _ in range(rounds):
            n, sent, secs, report = _measure(hub, lambda r=request: certify_package(r))
            times.append(secs)
        rows.append(Row(fmt, layers, len(paths), size, mode, n, sent, statistics.median(times),
                        report.status))  # type: ignore[attr-defined]
    n, sent, secs, _ = _measure(hub, lambda: _naive(hub, repo, sha, paths, work / "cache"))
    rows.append(Row(fmt, layers, len(paths), size, "naive: HEAD + download per file", n, sent,
                    secs, "-"))
    return rows


def _mb(n: int) -> str:
    return f"{n / 1e6:,.2f} MB"


ROUND_TRIP_GOAL = (94, 12)  # layers, round trips


def print_table(rows: list[Row], latency_s: float = 0.0) -> None:
    header: tuple[str, ...] = ("format", "layers", "files", "package", "approach", "requests",
                               "transferred", "% of package", "status", "time")
    if latency_s > 0:
        header += ("round trips",)
    lines = [header]
    for r in rows:
        line: tuple[str, ...] = (r.fmt, str(r.layers), str(r.files), _mb(r.package_bytes),
                                 r.mode,
                                 str(r.requests), _mb(r.bytes_sent),
                                 f"{100 * r.bytes_sent / r.package_bytes:.2f}%", r.status,
                                 f"{r.seconds:.2f}s")
        if latency_s > 0:
            line += (f"{r.seconds / latency_s:.1f}",)
        lines.append(line)
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    for i, line in enumerate(lines):
        print("  ".join(cell.ljust(w) if j == 4 else cell.rjust(w)
                        for j, (cell, w) in enumerate(zip(line, widths, strict=True))))
        if i == 0:
            print("  ".join("-" * w for w in widths))
    print()
    by_layers: dict[tuple[str, int], dict[str, Row]] = {}
    for r in rows:
        by_layers.setdefault((r.fmt, r.layers), {})[r.mode] = r
    for (fmt, layers), modes in by_layers.items():
        ours, naive = modes["meshcert"], modes["naive: HEAD + download per file"]
        artifacts = layers + (3 if fmt == "v1" else 2)
        fixed = ours.requests - 2 * artifacts
        print(f"{fmt} {layers:>3} layers: meshcert {ours.requests} requests ({fixed} fixed + 2 "
              f"per artifact header read, {artifacts} artifacts) vs naive {naive.requests}; "
              f"{naive.bytes_sent / max(ours.bytes_sent, 1):.1f}x fewer bytes")
    if latency_s > 0:
        print()
        for (fmt, layers), modes in by_layers.items():
            trips = modes["meshcert"].seconds / latency_s
            goal = (f"  (goal <= {ROUND_TRIP_GOAL[1]}: "
                    f"{'met' if trips <= ROUND_TRIP_GOAL[1] else 'MISSED'})"
                    if layers == ROUND_TRIP_GOAL[0] else "")
            print(f"{fmt} {layers:>3} layers at {latency_s * 1e3:g} ms per request: meshcert in "
                  f"{trips:.1f} round trips of wall time{goal}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, nargs="+", default=[4, 32, 94])
    parser.add_argument("--n-embd", type=int, default=256)
    parser.add_argument("--n-ff", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=3,
                        help="meshcert runs per package and mode (median; after a warm-up)")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="delay every request this long (a far-away Hub)")
    parser.add_argument("--formats", nargs="+", default=["v1", "v2"], choices=["v1", "v2"],
                        help="package formats, measured side by side")
    args = parser.parse_args()
    latency_s = args.latency_ms / 1000
    with tempfile.TemporaryDirectory(prefix="meshcert-bench-") as tmp, \
            HubProcess(latency_s) as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        from huggingface_hub import constants

        constants.ENDPOINT = hub.url
        constants.HUGGINGFACE_CO_URL_TEMPLATE = hub.url + "/{repo_id}/resolve/{revision}/{filename}"
        rows: list[Row] = []
        for layers in args.layers:
            for fmt in args.formats:
                rows += bench_package(hub, Path(tmp), layers, args.n_embd, args.n_ff,
                                      args.rounds, fmt)
        print(f"llama-style packages, n_embd={args.n_embd}, n_ff={args.n_ff} (F16 weights); "
              "requests and bytes counted by the fake Hub"
              + (f"; {args.latency_ms:g} ms per request" if latency_s else "") + "\n")
        print_table(rows, latency_s)


if __name__ == "__main__":
    main()
