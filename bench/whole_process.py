"""Whole-process figures: what a user (or a CI job) waits for, start-up included.

Each case runs two commands as fresh processes, both sides in the same run, interleaved round
by round (A, B, A, B, ...), and prints the medians and their ratio against the goal:

- help:     `meshcert --help` vs `python -c "import typer, rich.console"`      goal <= 1.5x
- certify:  `meshcert models certify` of the demo package vs that baseline      goal <= 3x
- big:      certify of a >= 4 GB local package (--verify-sha256) vs a
            sequential hashlib loop over the same files, in its own process     goal >= 1.7x
- ceiling:  the same files hashed by hashlib on one thread per core and nothing else, vs
            that loop: what `big` could reach if certifying cost nothing        (no goal)
- verify:   that same certify vs that ceiling, interleaved round by round: the share of the
            all-core hashlib ceiling the certification reaches                  goal >= 0.9x
- package:  `meshcert models certify --package-only` of a package of 7 fragments that each
            carry a 152k-token vocabulary (and 151k merges), the command a user runs, whole
            process, vs gguf.GGUFReader over the same 7 fragments in its own process
                                                                                goal >= 100x
- headers:  the reader function only: meshcert's header reader in a bare `python -c` over the
            same 7 fragments vs that same GGUFReader run (one run serves both)  goal >= 100x
- ingest:   `meshcert evidence ingest` of one small log vs the baseline         goal <= 3x

"meshcert" is `python -m meshcert` with this checkout first on PYTHONPATH, its modules byte-compiled
first (`compileall`, as pip does when it installs the wheel: with PYTHONDONTWRITEBYTECODE set, as
on this machine, a checkout is otherwise compiled from source by every process). The big package is
generated once (about 4.3 GB, 32 F16 layers) under the temp dir and kept for later runs (delete
it with `--clean`); the page cache is warmed before timing, so both sides hash from memory.

    python bench/whole_process.py                 # every case
    python bench/whole_process.py --only help certify ingest --rounds 9
    python bench/whole_process.py --quick         # small vocabulary, 1 GB package, fewer rounds
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PY = sys.executable
MESHCERT = [PY, "-m", "meshcert"]
BASELINE = [PY, "-c", "import typer, rich.console"]
PACKAGES = ("meshcert", "bench")
SMALL_LOG = ROOT / "meshcert/evidence/data/kernel-sweep/mul-mm-id-min-1.console.log"
HASHLIB_LOOP = (
    "import hashlib, sys\n"
    "for path in sys.argv[1:]:\n"
    "    digest = hashlib.sha256()\n"
    "    with open(path, 'rb') as handle:\n"
    "        for chunk in iter(lambda: handle.read(1 << 20), b''):\n"
    "            digest.update(chunk)\n"
    "    print(digest.hexdigest(), path)\n")
OUR_HEADERS = (
    "import sys\n"
    "from meshcert.core.gguf.reader import read_header_file\n"
    "for path in sys.argv[1:]:\n"
    "    header = read_header_file(path)\n"
    "    print(path, type(header).__name__)\n")
PARALLEL_HASHLIB = (
    "import hashlib, os, sys\n"
    "from concurrent.futures import ThreadPoolExecutor\n"
    "def digest(path):\n"
    "    h, buf = hashlib.sha256(), memoryview(bytearray(4 << 20))\n"
    "    with open(path, 'rb', buffering=0) as f:\n"
    "        while n := f.readinto(buf):\n"
    "            h.update(buf[:n])\n"
    "    return h.hexdigest()\n"
    "paths = sorted(sys.argv[1:], key=os.path.getsize, reverse=True)\n"
    "with ThreadPoolExecutor(os.cpu_count()) as pool:\n"
    "    for path, hexdigest in zip(paths, pool.map(digest, paths)):\n"
    "        print(hexdigest, path)\n")
THEIR_HEADERS = (
    "import sys\n"
    "from gguf import GGUFReader\n"
    "for path in sys.argv[1:]:\n"
    "    reader = GGUFReader(path)\n"
    "    print(path, len(reader.fields))\n")


@dataclass
class Case:
    name: str
    ours: list[str]
    theirs: list[str]
    goal: float | None  # None: a figure to read the others by, not a goal
    lower_is_better: bool  # True: ours/theirs <= goal; False: theirs/ours >= goal
    rounds: int
    their_rounds: int | None = None  # fewer rounds for a slow reference side
    label: str = ""  # what the figure measures, printed beside it


def run_once(cmd: Sequence[str], env: dict[str, str], expect: Callable[[int], bool]) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if not expect(proc.returncode):
        raise SystemExit(f"{' '.join(cmd[:6])}... exited {proc.returncode}:\n{proc.stderr}")
    return elapsed


_SLOW_REFERENCE: dict[tuple[str, ...], float] = {}  # a single-run reference, run once


def measure(case: Case, env: dict[str, str]) -> tuple[float, float]:
    """Medians (ours, theirs), one warm-up of each first, then interleaved rounds. A slow
    reference run once (GGUFReader: their_rounds=1) serves every case that names it."""
    ok = {0}.__contains__
    run_once(case.ours, env, ok)
    if case.their_rounds != 1:  # a slow reference (GGUFReader) is not run twice
        run_once(case.theirs, env, ok)
    ours: list[float] = []
    theirs: list[float] = []
    their_rounds = case.their_rounds or case.rounds
    for i in range(case.rounds):
        ours.append(run_once(case.ours, env, ok))
        if i < their_rounds:
            if their_rounds == 1:
                key = tuple(case.theirs)
                if key not in _SLOW_REFERENCE:
                    _SLOW_REFERENCE[key] = run_once(case.theirs, env, ok)
                theirs.append(_SLOW_REFERENCE[key])
            else:
                theirs.append(run_once(case.theirs, env, ok))
    return statistics.median(ours), statistics.median(theirs)


def report(case: Case, ours: float, theirs: float) -> bool | None:
    if case.goal is None:
        print(f"{case.name:<9} {ours:>9.3f} {theirs:>10.3f} {theirs / ours:>8.2f}x "
              f"{'':>9}  (no goal)", flush=True)
        return None
    if case.lower_is_better:
        ratio, met = ours / theirs, ours / theirs <= case.goal
        goal = f"<= {case.goal:g}x"
    else:
        ratio, met = theirs / ours, theirs / ours >= case.goal
        goal = f">= {case.goal:g}x"
    label = f"  ({case.label})" if case.label else ""
    print(f"{case.name:<9} {ours:>9.3f} {theirs:>10.3f} {ratio:>8.2f}x {goal:>9}  "
          f"{'met' if met else 'MISSED'}{label}", flush=True)
    return met


# --------------------------------------------------------------------------------------------
# inputs
# --------------------------------------------------------------------------------------------


def demo_package(work: Path) -> Path:
    from meshcert.testing import glm_dsa_spec, write_package

    return write_package(glm_dsa_spec(), work / "demo-package", source_dir=work / "demo-src").root


def big_package(cache: Path, layers: int, n_embd: int, n_ff: int) -> Path:
    """A real llama package of F16 layers (written once, kept under `cache`)."""
    from meshcert.testing import llama_spec, write_package

    root = cache / f"llama-{layers}x{n_embd}x{n_ff}"
    done = root / ".complete"
    if done.exists():
        return root
    shutil.rmtree(root, ignore_errors=True)
    per_layer = (4 * n_embd * n_embd + 3 * n_embd * n_ff) * 2
    need = int(layers * per_layer * 1.1)
    free = shutil.disk_usage(cache if cache.exists() else cache.parent).free
    if free < need * 2:
        raise SystemExit(f"need {need * 2 / 1e9:.1f} GB free under {cache} (package + "
                         f"generation headroom), have {free / 1e9:.1f} GB")
    print(f"writing a {layers}-layer package, about {need / 1.1 / 1e9:.1f} GB, under {root} "
          "(once; kept for later runs)...", flush=True)
    started = time.perf_counter()
    write_package(llama_spec(block_count=layers, n_embd=n_embd, n_ff=n_ff), root,
                  source_dir=None)
    done.write_text("ok\n")
    print(f"  written in {time.perf_counter() - started:.0f} s", flush=True)
    return root


def vocab_package(work: Path, n_tokens: int) -> Path:
    """A v1 package of 7 fragments (3 shared, 4 layers) written by the writer, each carrying
    the source's tokenizer: `n_tokens` BPE tokens and n_tokens - 677 merges (Qwen2's 152,064
    and 151,387)."""
    from meshcert.testing import llama_spec, write_package

    spec = llama_spec(block_count=4, n_vocab=n_tokens)
    spec.kv.pop("tokenizer.ggml.scores")
    spec.kv |= {"tokenizer.ggml.model": "gpt2",
                "tokenizer.ggml.tokens": [f"\u0120tok{i}" for i in range(n_tokens)],
                "tokenizer.ggml.token_type": [1] * n_tokens,
                "tokenizer.ggml.merges": [f"\u0120t ok{i}" for i in range(n_tokens - 677)]}
    return write_package(spec, work / "vocab-package", source_dir=work / "vocab-src").root


def warm(paths: Sequence[Path]) -> int:
    total = 0
    for path in paths:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 24):
                total += len(chunk)
    return total


# --------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    names = ["help", "certify", "big", "ceiling", "verify", "package", "headers", "ingest"]
    parser.add_argument("--only", nargs="+", choices=names, default=names)
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the quick cases")
    parser.add_argument("--big-rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true",
                        help="1 GB package, 32k vocabulary, fewer rounds")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "meshcert-bench-whole-process",
                        help="where the big package is kept between runs")
    parser.add_argument("--clean", action="store_true", help="delete the kept big package")
    args = parser.parse_args()
    if args.clean:
        shutil.rmtree(args.cache, ignore_errors=True)
        print(f"removed {args.cache}")
        return
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    env.pop("NO_COLOR", None)
    layers = 8 if args.quick else 32
    n_tokens = 32_000 if args.quick else 152_064
    rounds = 3 if args.quick else args.rounds
    big_rounds = 2 if args.quick else args.big_rounds
    args.cache.mkdir(parents=True, exist_ok=True)
    subprocess.run([PY, "-m", "compileall", "-q", *(str(ROOT / d) for d in PACKAGES)],
                   check=True, env=env)
    work = Path(tempfile.mkdtemp(prefix="meshcert-whole-process-"))
    try:
        cases: list[Case] = []
        if "help" in args.only:
            cases.append(Case("help", [*MESHCERT, "--help"], BASELINE, 1.5, True, rounds))
        if "certify" in args.only:
            demo = demo_package(work)
            cases.append(Case("certify", [*MESHCERT, "models", "certify", str(demo),
                                          "--package-only"], BASELINE, 3.0, True, rounds))
        if {"big", "ceiling", "verify"} & set(args.only):
            big = big_package(args.cache, layers, 2048, 8192)
            files = sorted(str(p) for p in big.rglob("*.gguf"))
            size = warm([Path(f) for f in files])
            print(f"big package: {len(files)} files, {size / 1e9:.2f} GB (page cache warmed)",
                  flush=True)
            loop = [PY, "-c", HASHLIB_LOOP, *files]
            if "big" in args.only:
                cases.append(Case("big", [*MESHCERT, "models", "certify", str(big),
                                          "--package-only", "--verify-sha256"], loop, 1.7,
                                  False, big_rounds))
            if "ceiling" in args.only:
                cases.append(Case("ceiling", [PY, "-c", PARALLEL_HASHLIB, *files], loop, None,
                                  False, big_rounds))
            if "verify" in args.only:
                cases.append(Case("verify", [*MESHCERT, "models", "certify", str(big),
                                             "--package-only", "--verify-sha256"],
                                  [PY, "-c", PARALLEL_HASHLIB, *files], 0.9, False,
                                  big_rounds, label="share of the all-core hashlib ceiling"))
        if "package" in args.only or "headers" in args.only:
            package = vocab_package(work, n_tokens)
            fragments = sorted(str(p) for p in package.rglob("*.gguf"))
            print(f"package, headers: {len(fragments)} fragments of {n_tokens} tokens each",
                  flush=True)
            theirs = [PY, "-c", THEIR_HEADERS, *fragments]
            if "package" in args.only:
                cases.append(Case("package", [*MESHCERT, "models", "certify", str(package),
                                              "--package-only"], theirs, 100.0, False, rounds,
                                  their_rounds=1, label="whole process, the user's command"))
            if "headers" in args.only:
                cases.append(Case("headers", [PY, "-c", OUR_HEADERS, *fragments], theirs,
                                  100.0, False, rounds, their_rounds=1,
                                  label="the reader function only, bare python -c"))
        if "ingest" in args.only:
            cases.append(Case("ingest", [*MESHCERT, "evidence", "ingest", str(SMALL_LOG)],
                              BASELINE, 3.0, True, rounds))
        print(f"{os.cpu_count()} cores; median of {rounds} interleaved rounds "
              f"({big_rounds} for big; 1 GGUFReader run for package and headers); seconds")
        print(f"{'case':<9} {'meshcert':>9} {'reference':>10} {'ratio':>9} {'goal':>9}")
        results = [met for case in cases
                   if (met := report(case, *measure(case, env))) is not None]
        print(f"{sum(results)}/{len(results)} goals met")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
