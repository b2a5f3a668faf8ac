"""Ingest throughput: meshcert's evidence ingester vs the old script's line-by-line regex loop.

Generates a mixed test-backend-ops perf log (whole rows with ANSI-coloured throughput, split
rows with stderr dispatch logs and `ggml_test:` sample lines between name and numbers,
`not supported` rows, backend sections, plain stderr chatter), then times, on the same file in
the same run (interleaved rounds, median):

- baseline: what the phase-E bash script's embedded Python does: one regex per line for
  `NAME(params): N runs - X us/run`, a tuple per hit; no split rows, no ANSI handling, no
  ggml_test samples, no provenance, no table;
- meshcert: `evidence.ingest_files` (detect, sha256, every parser, problems) and the
  DataFrame (`result.table`, built on first use).

The issue's target (meshcert at least as fast as that loop) is not met: about 0.27x on a
2-core Xeon, Python 3.11. On the mixed 1,000,000-line log meshcert spends ~1.7 s parsing (the
~360k lines that carry data ~1.3 s: the row/sample regexes ~0.45 s, one throughput dict per
perf row, joining split rows ~0.3 s; the ~640k chatter lines ~0.3 s with the split), ~0.35 s
on the table and sample numbering and ~0.15 s reading and decoding. The baseline's whole loop
takes ~0.65 s. Keeping chatter out of Python with one whole-text regex was tried and was slower:
it must still prove no skipped line holds `us/run`, `ggml_test:`, an ANSI escape or
`backends passed`, which costs about as much as it saves.

    python bench/ingest_throughput.py                # mixed log, 1,000,000 lines, 3 rounds
    python bench/ingest_throughput.py --mix all      # also stock rows-only and chatter-heavy
    python bench/ingest_throughput.py --lines 200000 --rounds 5
"""

from __future__ import annotations

import argparse
import gc
import os
import random
import re
import shutil
import statistics
import tempfile
import time
from collections import Counter
from pathlib import Path

from meshcert.evidence.ingest import ingest_files, ingest_texts

ESC = "\x1b"
_ROWS = [
    ("TOPK_MOE_GLM_ROUTE", "n_expert=256,n_expert_used=8,n_tokens=1", "bw"),
    ("MOE_WEIGHTED_SUM", "n_embd=6144,n_expert_used=8,n_tokens=1", "bw"),
    ("MOE_WEIGHTED_SUM", "n_embd=6144,n_expert_used=8,n_tokens=4", "bw"),
    ("MUL_MAT_ID", "type_a=q2_K,type_b=f32,n_mats=256,n_used=8,b=0,m=2048,n=1,k=6144", "fl"),
    ("MUL_MAT_ID", "type_a=q3_K,type_b=f32,n_mats=256,n_used=8,b=0,m=6144,n=1,k=2048", "fl"),
    ("MUL_MAT", "type_a=q2_K,type_b=f32,m=4096,n=1,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3]",
     "fl"),
    ("ADD", "type=f32,ne=[4096,1,1,1],nr=[1,1,1,1]", "bw"),
    ("TOPK_MOE_GLM_ACTIVATION", "n_ff=2048,n_expert_used=8,n_tokens=1,fused_glu=1", "bw"),
    ("GLM_SHEXP_CONSUMER", "gate_type=q4_K,up_type=q4_K,down_type=q4_K,n_embd=6144,n_ff=2048,"
     "n_tokens=1,fused_glu=1,merged_gate_up=0", "fl"),
] + [
    ("GLM_FFN_CONSUMER", "routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type="
     f"{down},shexp_gate_type=q4_K,shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,"
     f"n_expert_used=8,n_tokens=1,n_embd=6144,n_ff=2048,fused_glu=1,weighted_down={wd},"
     f"merged_shexp_gate_up={mg}", "fl")
    for down, wd, mg in (("q3_K", 0, 0), ("q2_K", 0, 0), ("q2_K", 1, 0), ("q3_K", 0, 1))
]
_CHATTER = [
    "ggml_metal_encode_node: dispatch kernel_mul_mv_id_q3_K_f32 nsg=2 nr0=4",
    "ggml_metal_graph_compute: command buffer 0 committed",
    "ggml_metal_op_mul_mat_id: using kernel_mul_mv_id_q2_K_f32 (ne00=6144, ne01=2048)",
    "ggml_backend_metal_buffer_type_alloc_buffer: allocated buffer, size = 96.00 MiB",
    "ggml_metal_library_compile_pipeline: compiling pipeline: base = 'kernel_add', name = "
    "'kernel_add_f32'",
    "  - dispatch: grid=[768,1,1] tg=[64,1,1] shmem=8192",
]


def _prefix(name: str, params: str) -> str:
    prefix = f"  {name}({params}): "
    last = (len(prefix) + 7) // 8 * 8
    return prefix + " " * (last - len(prefix) + (8 if last - len(prefix) < 5 else 0))


def _numbers(rng: random.Random, kind: str) -> str:
    us = rng.uniform(3.0, 1200.0)
    runs = rng.randint(64, 200000)
    if kind == "bw":
        return (f"    {runs:8d} runs - {us:8.2f} us/run - {rng.randint(1, 900):8d} kB/run - "
                f"{ESC}[1;34m{rng.uniform(0.1, 90):7.2f} GB/s{ESC}[0m")
    return (f"    {runs:8d} runs - {us:8.2f} us/run - {rng.uniform(1, 999):6.2f} MFLOP/run - "
            f"{ESC}[1;34m{rng.uniform(1, 999):6.2f} GFLOPS{ESC}[0m")


MIXES = {
    # (whole row, split row, not supported, ggml_test samples in a split row, chatter lines)
    "mixed": (0.40, 0.15, 0.02, (1, 3), (1, 2)),     # the patched fork with dispatch logging
    "rows": (0.97, 0.02, 0.01, (0, 0), (0, 0)),       # stock test-backend-ops perf output
    "chatter": (0.08, 0.02, 0.00, (0, 1), (8, 12)),   # a verbose Metal debug log
}


def generate(path: Path, n_lines: int, mix: str = "mixed", seed: int = 52) -> Counter[str]:
    """Write a perf log of about n_lines lines; return the count per line type."""
    p_row, p_split, p_unsupported, samples, chatter = MIXES[mix]
    rng = random.Random(seed)
    counts: Counter[str] = Counter()
    out: list[str] = []

    def put(kind: str, line: str) -> None:
        counts[kind] += 1
        out.append(line)

    put("section", "Testing 3 devices")
    while len(out) < n_lines:
        if counts["section"] == 1 or rng.random() < 0.0005:
            put("section", f"Backend {rng.randint(1, 3)}/3: Metal")
            put("section", "  Device description: Apple M3 Max")
        name, params, kind = rng.choice(_ROWS)
        roll = rng.random()
        if roll < p_row:
            put("row", _prefix(name, params) + _numbers(rng, kind))
        elif roll < p_row + p_split:    # split row: name, stderr, ggml_test samples, numbers
            put("split-name", _prefix(name, params).rstrip() + " " + rng.choice(_CHATTER))
            for _ in range(rng.randint(1, 3)):
                put("chatter", rng.choice(_CHATTER))
            for i in range(1, rng.randint(*samples) + 1):
                put("ggml_test", f"ggml_test: perf_sample op={name} params={params} "
                    f"sample={i}/3 runs={rng.randint(64, 4096)} "
                    f"avg_us={rng.uniform(3.0, 1200.0):.2f}")
            put("split-numbers", " " * 24 + _numbers(rng, kind).lstrip())
        elif roll < p_row + p_split + p_unsupported:
            put("not-supported", f"  {name}({params}): not supported")
        for _ in range(rng.randint(*chatter)):
            put("chatter", rng.choice(_CHATTER))
    put("section", f"  Backend Metal: {ESC}[1;32mOK{ESC}[0m")
    put("section", "3/3 backends passed")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return counts


_SCRIPT_ROW = re.compile(r"^\s*([A-Z0-9_]+)\((.*)\):\s+(\d+) runs\s+-\s+([0-9.]+) us/run")


def baseline(path: Path) -> list[tuple[str, str, float]]:
    """The bash script's embedded parser: one regex per line, whole rows only."""
    rows = []
    with open(path, encoding="utf-8", errors="replace") as handle:
        for line in handle:
            m = _SCRIPT_ROW.match(line)
            if m:
                rows.append((m.group(1), m.group(2), float(m.group(4))))
    return rows


def run(mix: str, n_lines: int, rounds: int, work: Path) -> float:
    """Generate one mix, time both methods interleaved; print the figures; return the ratio."""
    log = work / f"run-{mix}.console.log"
    counts = generate(log, n_lines, mix)
    total = sum(counts.values())
    baseline(log)  # warm the page cache
    len(ingest_texts({}).table)  # load pandas (the table's first use) before the clock
    names = ("baseline (script regex loop)", "meshcert ingest_files")
    times: dict[str, list[float]] = {name: [] for name in names}
    rows: list[tuple[str, str, float]] = []
    result = None
    for _ in range(rounds):
        # each timing starts clean: the previous round's answers are freed and the cyclic
        # collector has run before the clock starts (else a method pays for tearing down, or
        # for the collector walking, what the previous round built)
        rows, result, table = [], None, None
        gc.collect()
        start = time.perf_counter()
        rows = baseline(log)
        times[names[0]].append(time.perf_counter() - start)
        gc.collect()
        start = time.perf_counter()
        result = ingest_files([log])
        table = result.table    # built on first use: the DataFrame is part of the work timed
        times[names[1]].append(time.perf_counter() - start)
    assert result is not None
    found = {names[0]: len(rows), names[1]: len(result.table)}
    table = result.table
    perf = int(((table["kind"] == "perf") & table["supported"].fillna(False)).sum())
    print(f"mix {mix!r}: {total:,} lines, {log.stat().st_size / 1e6:.1f} MB, {rounds} rounds "
          f"(median), {os.cpu_count()} cores")
    print("  lines: " + ", ".join(f"{k} {v:,}" for k, v in counts.most_common()))
    print(f"  {'method':<30}{'seconds':>9}{'lines/s':>13}{'rows':>10}")
    for name in names:
        t = statistics.median(times[name])
        print(f"  {name:<30}{t:>9.3f}{total / t:>13,.0f}{found[name]:>10,}")
    ratio = statistics.median(times[names[0]]) / statistics.median(times[names[1]])
    print(f"  meshcert / baseline throughput: {ratio:.2f}x (issue target >= 1.00x: "
          f"{'met' if ratio >= 1.0 else 'not met; see --help for where the time goes'})")
    print(f"  meshcert also: {perf:,} perf rows incl. split rows (baseline: {len(rows):,}), "
          f"{found[names[1]] - perf:,} other rows, {len(result.problems)} problem(s), "
          f"{result.sources[0].ignored:,} chatter lines counted, sha256 + provenance")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--mix", choices=[*MIXES, "all"], default="mixed",
                        help="line mix (default: mixed; all: every mix in turn)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="meshcert-ingest-bench-"))
    try:
        for mix in MIXES if args.mix == "all" else [args.mix]:
            run(mix, args.lines, args.rounds, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
