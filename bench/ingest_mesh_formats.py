"""mesh-llm evidence ingest vs a bare `json.loads` loop over the same bytes, in one run.

Two inputs, generated in a temporary folder (shaped as ../shared/spec/bench-formats.md says):

- a performance history JSONL of `--history-rows` rows (default 1,000,000) over 16 setups:
  meshcert = `meshcert.evidence.history.read_history` + `classify_all` (stream, validate each row,
  check
  its cohort_key, the regression classes); bare = `for line in file: json.loads(line)`;
- a directory of `--runs` skippy-bench run folders (default 10,000), each a driver-result.json
  with its deployment-plan.json and two configs/stage-N.json: meshcert = `evidence.ingest_files`
  on the driver results (it reads the siblings for the setup key); bare = json.loads of the
  same four files per run.

Each measurement runs in its own child process, which reports its wall time, its CPU time and
its peak resident memory (ru_maxrss); bare and meshcert alternate `--repeat` times and the
median ratios are printed (wall and CPU: on a shared machine the CPU ratio is the steadier);
the history is also read at a quarter of its size, to show the
memory does not grow with the file (its bytes a row are printed). Prints the ratios (goal:
meshcert <= 2x the bare loop). The machine may be shared: run it twice and compare ratios.

    python bench/ingest_mesh_formats.py
    python bench/ingest_mesh_formats.py --history-rows 200000 --runs 2000
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path


def _cohort(i: int) -> dict[str, object]:
    return {"platform": "h100", "hardware": {"name": "NVIDIA H100 80GB", "count": 1},
            "model": f"model-{i % 4}", "arm": ["llama", "mesh", "mesh-adaptive", "vllm"][i // 4],
            "config_sha256": "c0ffee" * 10, "concurrency": 1 + i % 4}


def write_history(path: Path, rows: int, cohorts: int = 16) -> int:
    keys = []
    for c in range(cohorts):
        cohort = _cohort(c)
        text = json.dumps(cohort, sort_keys=True, separators=(",", ":"))
        keys.append((cohort, hashlib.sha256(text.encode()).hexdigest()))
    start = datetime(2025, 1, 1, tzinfo=UTC)
    with path.open("w", encoding="utf-8") as out:
        for i in range(rows):
            cohort, key = keys[i % cohorts]
            out.write(json.dumps({
                "schema_version": 1,
                "created_utc": (start + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                "source_sha": f"{i // cohorts:040x}", "cohort_key": key, "cohort": cohort,
                "output_tokens_per_second": 400.0 + (i * 7919) % 13,
                "ttft_ms_mean": 180.0 + (i * 104729) % 7, "complete": True},
                separators=(",", ":")) + "\n")
    return path.stat().st_size


def write_runs(root: Path, runs: int) -> list[Path]:
    plan = json.dumps({"model_identity": {"model_id": "qwen3-8b", "source_revision": "abc"},
                       "topology_id": "two-host", "hosts": ["a", "b"],
                       "stages": [{"host": "a", "layer_start": 0, "layer_end": 18},
                                  {"host": "b", "layer_start": 18, "layer_end": 36}]})
    stage = json.dumps({"cache_type_k": "f16", "cache_type_v": "f16", "ctx_size": 8192,
                        "n_gpu_layers": 99, "load_mode": "mmap"})
    paths = []
    for i in range(runs):
        folder = root / f"run-{i:05d}"
        (folder / "configs").mkdir(parents=True)
        (folder / "deployment-plan.json").write_text(plan)
        (folder / "configs" / "stage-0.json").write_text(stage)
        (folder / "configs" / "stage-1.json").write_text(stage)
        result = {"prompt_count": 2, "max_new_tokens": 32, "summary": {
            "prompt_tokens_total": 180, "generated_tokens_total": 64,
            "elapsed_ms_total": 1500 + i, "ttft_ms_mean": 90.5 + i % 5,
            "ttft_ms_p50": 88 + i % 5, "ttft_ms_p95": 95, "generated_tokens_per_second": 41.7},
            "results": [{"prompt_id": f"p{k}", "elapsed_ms": 700 + k, "ttft_ms": 88 + k,
                         "decode_elapsed_ms": 600 + k} for k in range(2)]}
        path = folder / "driver-result.json"
        path.write_text(json.dumps(result))
        paths.append(path)
    return paths


def _child(mode: str, target: str) -> dict[str, float]:
    started = time.perf_counter()
    if mode.endswith("meshcert"):       # imports (numpy, pydantic) are timed apart
        import meshcert.evidence.history
        import meshcert.evidence.ingest  # noqa: F401
    imports = time.perf_counter() - started
    start = time.perf_counter()
    cpu_start = time.process_time()
    count = 0
    if mode == "history-bare":
        with open(target, "rb") as handle:
            for line in handle:
                json.loads(line)
                count += 1
    elif mode == "history-meshcert":
        from meshcert.evidence.history import classify_all, read_history

        history = read_history(target)
        count = history.rows
        classify_all(history)
    else:
        paths = Path(target).read_text().split("\n")
        if mode == "runs-bare":
            for p in paths:
                folder = Path(p).parent
                for f in (Path(p), folder / "deployment-plan.json",
                          folder / "configs" / "stage-0.json", folder / "configs" / "stage-1.json"):
                    json.loads(f.read_bytes())
                count += 1
        else:
            from meshcert.evidence.ingest import ingest_files

            count = ingest_files(paths).row_count
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "cpu": time.process_time() - cpu_start, "count": count,
            "imports": imports,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def _measure(mode: str, target: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--child", mode, str(target)], check=True,
                         capture_output=True, text=True)
    result: dict[str, float] = json.loads(out.stdout)
    return result


def _pairs(bare_mode: str, ours_mode: str, target: Path, repeat: int
           ) -> tuple[dict[str, float], dict[str, float], float, float]:
    """Bare and meshcert measured `repeat` times, interleaved (bare, meshcert, bare, ...), so
    drift of a shared machine hits both; (last bare, last meshcert, median wall ratio, median
    CPU ratio). The CPU ratio (process time) is the steadier one when other work competes."""
    walls, cpus = [], []
    bare: dict[str, float] = {}
    ours: dict[str, float] = {}
    for _ in range(repeat):
        bare, ours = _measure(bare_mode, target), _measure(ours_mode, target)
        walls.append(ours["seconds"] / bare["seconds"])
        cpus.append(ours["cpu"] / bare["cpu"])
    return bare, ours, statistics.median(walls), statistics.median(cpus)


def _line(label: str, pair: tuple[dict[str, float], dict[str, float], float, float]) -> None:
    bare, ours, wall, cpu = pair
    print(f"{label:<38} {bare['seconds']:>7.2f} {ours['seconds']:>10.2f} {wall:>6.2f}x "
          f"{cpu:>6.2f}x {bare['maxrss_mb']:>8.0f} {ours['maxrss_mb']:>12.0f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--history-rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3,
                        help="interleaved pairs per input; the median ratio is printed")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0
    with tempfile.TemporaryDirectory(prefix="meshcert-bench-mesh-") as tmp:
        root = Path(tmp)
        sizes = {}
        for name, rows in (("quarter", args.history_rows // 4), ("full", args.history_rows)):
            path = root / f"history-{name}.jsonl"
            sizes[name] = (path, write_history(path, rows), rows)
        print(f"{'input':<38} {'bare s':>7} {'meshcert s':>10} {'wall':>7} {'cpu':>7} "
              f"{'bare MB':>8} {'meshcert MB':>12}   (ratios: median of {args.repeat})")
        peaks = []
        for path, size, rows in sizes.values():
            pair = _pairs("history-bare", "history-meshcert", path, args.repeat)
            peaks.append((rows, pair[1]["maxrss_mb"]))
            _line(f"history {rows:,} rows ({size / 1e6:.0f} MB)", pair)
        (rows_q, mb_q), (rows_f, mb_f) = peaks
        print(f"history memory growth: {(mb_f - mb_q) * 2**20 / max(1, rows_f - rows_q):.1f} "
              f"bytes a row ({mb_q:.0f} MB at {rows_q:,} rows, {mb_f:.0f} MB at {rows_f:,}; "
              "goal: flat, the rows spill to a temporary file)")
        paths = write_runs(root / "runs", args.runs)
        listing = root / "runs.txt"
        listing.write_text("\n".join(map(str, paths)))
        pair = _pairs("runs-bare", "runs-meshcert", listing, args.repeat)
        _line(f"skippy runs {args.runs:,} dirs ({int(pair[1]['count']):,} rows)", pair)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
