"""Slices: the bytes N slices hash together against the package's bytes (each slice hashing what
its stage loads, the shared parts N times; and with `--hash-once`, each byte once), and N slice
runs started together vs one whole-package run, side by side.

Builds a v1 and a v2 package from one source GGUF (a generated llama, or --source), then for each
N: certifies every `--stage I/N` in process, without and with --hash-once (what the HF Jobs plan
runs), and adds up the bytes each slice hashed (the digests it reports) against the package's
bytes; and times one whole run vs the N slice runs launched at
once, each in its own warm worker process (imports excluded, page cache warm, median of rounds,
interleaved). On a real mesh the N runs are on N machines; here they share
this machine's cores and disk, so the wall-time ratio shows where this machine saturates.

    python bench/slices.py                       # generated 24-layer llama (~300 MB), N = 2, 4
    python bench/slices.py --source model.gguf --counts 2 4 8 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests.support package

from meshcert.certify.merge import Slice, merge_slices
from meshcert.certify.scope import parse_stage
from meshcert.certify.service import CertRequest, certify_package
from meshcert.certify.view import CertOptions
from meshcert.testing import llama_spec, write_source_gguf
from tests.support.splits import SplitPackage, split_v1, split_v2


def package_bytes(pkg: SplitPackage) -> int:
    return sum(p.stat().st_size for p in pkg.files.values())


def hashed_bytes(pkg: SplitPackage, n: int, hash_once: bool) -> tuple[int, int, str]:
    """(bytes hashed by all N slices together, bytes of the largest slice, merged status)."""
    total, largest, parts = 0, 0, []
    for i in range(n):
        report = certify_package(CertRequest(model=str(pkg.root), options=CertOptions(
            scope=parse_stage(f"{i}/{n}", hash_once=hash_once))))
        mine = sum(pkg.files[p].stat().st_size for p in report.digests)
        total, largest = total + mine, max(largest, mine)
        parts.append(Slice(f"{i}/{n}", report))
    return total, largest, merge_slices(parts).status


def _certify(root: str, stage: str | None) -> float:
    """One node's run, in a worker process: seconds of certification work (imports excluded)."""
    started = time.perf_counter()
    certify_package(CertRequest(model=root, options=CertOptions(
        scope=parse_stage(stage) if stage else None)))
    return time.perf_counter() - started


def wall(pool: ProcessPoolExecutor, root: Path, stages: list[str | None]) -> float:
    """Seconds until every run, all submitted at once to warm workers, has finished."""
    started = time.perf_counter()
    list(pool.map(_certify, [str(root)] * len(stages), stages))
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source", type=Path, help="a GGUF to split (default: generated)")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--counts", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="meshcert-slices-") as tmp:
        base = Path(tmp)
        source = args.source or write_source_gguf(
            llama_spec(block_count=args.layers, n_embd=512, n_ff=1536, n_vocab=8192),
            base / "source.gguf")
        pkgs = {"v1": split_v1(source, base / "v1", model_id="bench/slices:v1"),
                "v2": split_v2(source, base / "v2", model_id="bench/slices:v2")}
        print(f"cores: {os.cpu_count()}  source: {source.name}")
        for fmt, pkg in pkgs.items():
            size = package_bytes(pkg)
            print(f"\n{fmt}: {len(pkg.files)} artifacts, {size / 1e6:.1f} MB")
            print("  N  plan          hashed by all slices  vs package  largest slice  merged")
            for n in args.counts:
                for label, once in (("what it loads", False), ("--hash-once", True)):
                    total, largest, status = hashed_bytes(pkg, n, once)
                    print(f"  {n:<2} {label:<13} {total / 1e6:>12.1f} MB  {total / size:>9.3f}x"
                          f"  {largest / size:>12.1%}  {status}")
        pkg = pkgs["v2"]
        print(f"\nwall time, v2, whole run vs N slice runs at once in warm worker processes "
              f"(median of {args.rounds}):")
        workers = max(args.counts)
        with ProcessPoolExecutor(max_workers=workers) as pool:
            wall(pool, pkg.root, [None] * workers)  # warm the imports and the page cache
            times: dict[int, list[float]] = {1: []} | {n: [] for n in args.counts}
            alone: dict[int, list[float]] = {n: [] for n in args.counts}
            for _ in range(args.rounds):
                for n in times:
                    stages: list[str | None] = ([None] if n == 1 else
                                                [f"{i}/{n}" for i in range(n)])
                    times[n].append(wall(pool, pkg.root, stages))
                    if n > 1:  # what one node does on its own machine
                        alone[n].append(wall(pool, pkg.root, [f"0/{n}"]))
        one = statistics.median(times[1])
        print(f"  whole package, 1 run:  {one:.3f} s")
        for n in args.counts:
            t, a = statistics.median(times[n]), statistics.median(alone[n])
            print(f"  {n} slices at once:     {t:.3f} s  ({one / t:.2f}x the whole run's speed);"
                  f" stage 0/{n} alone: {a:.3f} s ({one / a:.2f}x)")

if __name__ == "__main__":
    main()
