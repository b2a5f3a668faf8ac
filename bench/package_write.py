"""`meshcert package write` against the copies it is read by, whole process, in one run.

On a multi-GB synthetic source (a llama of 8 F32 layers, 2.67 GB, generated once and kept
under the temp dir, like bench/whole_process.py's `big` package), with the page cache warm, four
commands run as fresh processes, interleaved round by round, each under `/usr/bin/time -v` for
its peak resident set and CPU time:

- cp:          `cp SRC DST` (coreutils: copy_file_range, no hashing)
- sha256:      one sequential hashlib pass over SRC (the hashing floor of one core)
- gguf-split:  `llama-gguf-split --split --split-max-tensors 20 SRC OUT` (a real peer writer:
               copy, no hashing)
- write:       `meshcert package write SRC --out-dir D --model-id ... --quiet` (v2, every
               digest, verification, certification with --source semantics)

It prints the medians, write/sha256 against the goal (<= 1.15x one sequential hashlib pass of
the source, measured in the same run), write/gguf-split (<= 1.0x), write/cp, the peak RSS against
300 MB, and the throughput in GB/s beside mesh-llm's published "~1 GB/min". It also prints the
floor any certified writer has on this machine: it must hash the source and every artifact with
SHA-256 (the two published digests: at least 2x the sha256 side's user CPU time) and read and
write every byte (at least the cp side's CPU time), spread over all cores at best; so
write/sha256 cannot go below floor/sha256 here. Outputs are deleted after every command. The
machine may be shared: rounds are interleaved and medians compared.

    python bench/package_write.py                  # 8 layers x 2048 x 8192 F32, ~2.7 GB
    python bench/package_write.py --layers 32 --dtype F16   # the older 4.7 GB figure
    python bench/package_write.py --quick          # 8 F16 layers, ~1.1 GB, 3 rounds
    python bench/package_write.py --format v1 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

PY = sys.executable
TIME = "/usr/bin/time"
MESH_LLM_GB_PER_S = 1 / 60  # mesh-llm's published "~1 GB/min"
HASHLIB_PASS = (
    "import hashlib, sys\n"
    "h, buf = hashlib.sha256(), memoryview(bytearray(8 << 20))\n"
    "with open(sys.argv[1], 'rb', buffering=0) as f:\n"
    "    while n := f.readinto(buf):\n"
    "        h.update(buf[:n])\n"
    "print(h.hexdigest())\n")
_RSS = re.compile(r"Maximum resident set size \(kbytes\): (\d+)")
_USER = re.compile(r"User time \(seconds\): ([\d.]+)")
_SYSTEM = re.compile(r"System time \(seconds\): ([\d.]+)")


@dataclass
class Side:
    name: str
    command: list[str]
    output: Path | None  # deleted after each run
    seconds: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    user_s: list[float] = field(default_factory=list)
    cpu_s: list[float] = field(default_factory=list)  # user + system


def source_model(cache: Path, layers: int, n_embd: int, n_ff: int, dtype: str = "F16") -> Path:
    """The source GGUF (written once, kept under `cache`): a llama whose matrices are `dtype`."""
    from dataclasses import replace

    from gguf import GGMLQuantizationType

    from meshcert.testing import llama_spec, write_source_gguf

    spec = llama_spec(block_count=layers, n_embd=n_embd, n_ff=n_ff, n_vocab=32000)
    if dtype != "F16":
        wanted = GGMLQuantizationType[dtype]
        spec.tensors = [replace(t, ggml_type=wanted) if len(t.shape) > 1 else t
                        for t in spec.tensors]
    suffix = "" if dtype == "F16" else f"-{dtype}"
    path = cache / f"llama-{layers}x{n_embd}x{n_ff}{suffix}.gguf"
    done = path.with_suffix(".complete")
    if done.exists():
        return path
    cache.mkdir(parents=True, exist_ok=True)
    print(f"writing the source {path} (once; kept for later runs)...", flush=True)
    started = time.perf_counter()
    write_source_gguf(spec, path)
    done.write_text("ok\n")
    print(f"  {path.stat().st_size / 1e9:.2f} GB in {time.perf_counter() - started:.0f} s",
          flush=True)
    return path


def warm(path: Path) -> None:
    with open(path, "rb", buffering=0) as handle:
        buffer = bytearray(16 << 20)
        while handle.readinto(buffer):
            pass


def run(side: Side, env: dict[str, str]) -> None:
    if side.output is not None:
        shutil.rmtree(side.output, ignore_errors=True)
        if side.name == "gguf-split":
            side.output.mkdir(parents=True)
    started = time.perf_counter()
    proc = subprocess.run([TIME, "-v", *side.command], env=env, cwd=ROOT,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{side.name} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    match = _RSS.search(proc.stderr)
    side.seconds.append(elapsed)
    side.rss_kb.append(int(match.group(1)) if match else 0)
    user = float(m.group(1)) if (m := _USER.search(proc.stderr)) else 0.0
    system = float(m.group(1)) if (m := _SYSTEM.search(proc.stderr)) else 0.0
    side.user_s.append(user)
    side.cpu_s.append(user + system)
    if side.output is not None:
        if side.output.is_dir():
            shutil.rmtree(side.output)
        else:
            side.output.unlink(missing_ok=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="8 F16 layers (~1.1 GB), 3 rounds")
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--dtype", choices=["F32", "F16"], default="F32",
                        help="the type of the source's matrices")
    parser.add_argument("--format", choices=["v2", "v1"], default="v2")
    parser.add_argument("--cache", type=Path,
                        default=Path(tempfile.gettempdir()) / "meshcert-bench-package-write")
    parser.add_argument("--work", type=Path, default=None,
                        help="where outputs go (default: beside the source, same disk)")
    args = parser.parse_args()
    layers, rounds = (8, 3) if args.quick else (args.layers, args.rounds)
    source = source_model(args.cache, layers, 2048, 8192, "F16" if args.quick else args.dtype)
    size = source.stat().st_size
    work = args.work or args.cache / "out"
    work.mkdir(parents=True, exist_ok=True)
    if shutil.disk_usage(work).free < 2.5 * size:
        raise SystemExit(f"need {2.5 * size / 1e9:.1f} GB free under {work}")
    from tests.support.llama_tools import llama_bin_dir

    bin_dir = llama_bin_dir()
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
    subprocess.run([PY, "-m", "compileall", "-q", "meshcert"],
                   cwd=ROOT, check=True)
    sides = [
        Side("cp", ["cp", str(source), str(work / "copy.gguf")], work / "copy.gguf"),
        Side("sha256", [PY, "-c", HASHLIB_PASS, str(source)], None),
        Side("write", [PY, "-m", "meshcert", "package", "write", str(source), "--out-dir",
                       str(work / "package"), "--model-id", "bench/llama-F16:F16",
                       "--format", args.format, "--quiet"], work / "package"),
    ]
    if bin_dir is not None:
        sides.insert(2, Side("gguf-split", [str(bin_dir / "llama-gguf-split"), "--split",
                                            "--split-max-tensors", "20", str(source),
                                            str(work / "split" / "part")], work / "split"))
    else:
        print("llama-gguf-split not built (scripts/build_llama_cpp.py): that side is left out")
    print(f"source: {source} ({size / 1e9:.2f} GB), {rounds} rounds after a warm-up, "
          f"{os.cpu_count()} cores, format {args.format}", flush=True)
    warm(source)
    for side in sides:  # warm-up, not counted
        run(side, env)
        side.seconds.clear()
        side.rss_kb.clear()
        side.user_s.clear()
        side.cpu_s.clear()
    for i in range(rounds):
        for side in sides:
            warm(source)
            run(side, env)
        print(f"  round {i + 1}: " + ", ".join(f"{s.name} {s.seconds[-1]:.2f} s" for s in sides),
              flush=True)
    med = {s.name: statistics.median(s.seconds) for s in sides}
    cpu = {s.name: statistics.median(s.cpu_s) for s in sides}
    user = {s.name: statistics.median(s.user_s) for s in sides}
    print(f"\n{'side':<11} {'median s':>9} {'GB/s':>7} {'CPU s':>7} {'peak RSS MB':>12}")
    for s in sides:
        print(f"{s.name:<11} {med[s.name]:>9.2f} {size / med[s.name] / 1e9:>7.2f} "
              f"{cpu[s.name]:>7.2f} {max(s.rss_kb) / 1024:>12.0f}")
    write_rss = max(next(s for s in sides if s.name == "write").rss_kb) / 1024
    cores = os.cpu_count() or 1
    floor_cpu = 2 * user["sha256"] + cpu["cp"]
    ratio = med["write"] / med["sha256"]
    print(f"\nwrite / sha256     {ratio:.2f}x  (goal <= 1.15x one sequential hashlib pass: "
          f"{'met' if ratio <= 1.15 else 'MISSED'})")
    # in CPU seconds, which a shared machine disturbs far less than wall time: what the wall
    # ratios come to when every core is free for the run
    print(f"floor / sha256     {floor_cpu / cores / cpu['sha256']:.2f}x  in CPU time: any "
          f"certified writer spends 2 x {user['sha256']:.2f} s of SHA-256 + {cpu['cp']:.2f} s "
          f"of copying = {floor_cpu:.2f} CPU s, over {cores} cores at best, against the pass's "
          f"{cpu['sha256']:.2f} s")
    print(f"write CPU / cores  {cpu['write'] / cores / cpu['sha256']:.2f}x  the pass's CPU "
          f"({cpu['write']:.2f} CPU s over {cores} cores): write / sha256 on free cores")
    if "gguf-split" in med:
        print(f"write / gguf-split {med['write'] / med['gguf-split']:.2f}x  (goal <= 1.0x)")
    print(f"write / cp         {med['write'] / med['cp']:.2f}x  (goal <= 1.3x)")
    print(f"write peak RSS     {write_rss:.0f} MB  (goal < 300 MB)")
    print(f"write throughput   {size / med['write'] / 1e9:.2f} GB/s = "
          f"{size / med['write'] / 1e9 / MESH_LLM_GB_PER_S:.0f}x mesh-llm's ~1 GB/min")


if __name__ == "__main__":
    main()
