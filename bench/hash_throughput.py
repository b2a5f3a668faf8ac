"""Hash throughput: meshcert's parallel verifier vs a sequential hashlib loop vs sha256sum.

Writes N files of S MB (random data), warms the page cache, then times each method on the same
files in the same run, interleaved over rounds; prints GB/s and the ratios (median of rounds).

    python bench/hash_throughput.py            # 8 x 256 MB, 3 rounds
    python bench/hash_throughput.py --files 4 --size-mb 64 --rounds 2
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from meshcert.core.hashing import hash_files


def sequential_hashlib(paths: list[str]) -> dict[str, str]:
    out = {}
    for path in paths:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        out[path] = digest.hexdigest()
    return out


def meshcert_verifier(paths: list[str]) -> dict[str, str]:
    return {p: r.sha256 or "" for p, r in hash_files(paths).items()}


def coreutils(paths: list[str]) -> dict[str, str]:
    out = subprocess.run(["sha256sum", *paths], check=True, capture_output=True, text=True)
    return {line.split("  ", 1)[1]: line.split("  ", 1)[0] for line in out.stdout.splitlines()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--size-mb", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="meshcert-hash-bench-"))
    try:
        paths = []
        block = os.urandom(1 << 20)
        for i in range(args.files):
            path = work / f"layer-{i:05d}.gguf"
            with open(path, "wb") as handle:
                for j in range(args.size_mb):
                    handle.write(block[j % 7:] + block[: j % 7])
            paths.append(str(path))
        total = args.files * args.size_mb * (1 << 20)
        sequential_hashlib(paths)  # warm the page cache so every method reads from memory
        methods = {"sequential hashlib": sequential_hashlib, "meshcert verifier": meshcert_verifier}
        if shutil.which("sha256sum"):
            methods["sha256sum (coreutils)"] = coreutils
        times: dict[str, list[float]] = {name: [] for name in methods}
        reference: dict[str, str] | None = None
        for _ in range(args.rounds):
            for name, method in methods.items():
                start = time.perf_counter()
                digests = method(paths)
                times[name].append(time.perf_counter() - start)
                if reference is None:
                    reference = digests
                assert digests == reference, f"{name} disagrees with the other methods"
        base = statistics.median(times["sequential hashlib"])
        print(f"{args.files} files x {args.size_mb} MB = {total / 1e9:.2f} GB, "
              f"{args.rounds} rounds, {os.cpu_count()} cores (median of rounds)")
        print(f"{'method':<24}{'seconds':>9}{'GB/s':>8}{'vs sequential':>15}")
        for name in methods:
            t = statistics.median(times[name])
            print(f"{name:<24}{t:>9.2f}{total / t / 1e9:>8.2f}{base / t:>14.2f}x")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
