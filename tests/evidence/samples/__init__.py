"""Realistic llama.cpp output for the ingestion tests: the text files in this folder, plus
builders that format rows exactly as test-backend-ops prints them (padding, ANSI colours).

Files: phase-e-perf.console.log (perf, split rows, ggml_test lines, not supported),
phase-e-parity.console.log (test mode), kernel-sweep/*.console.log, fixed-block-dispatch/*,
phase-e-perf.sql / older-build.sql (--output sql, 16 / 14 columns), tbo-output.csv,
llama-bench.{json,jsonl,csv,sql}, llama-bench-md-pasted.txt (the default table as pasted),
ppl-q3_K.log, kld-q2_K-routed-down.log, tbo-test-ctest-caret.log (test mode as `ctest -V`
copied from a terminal shows it: colour codes in caret notation, `^[[1;32mOK^[[0m`).
"""

from __future__ import annotations

from pathlib import Path

SAMPLES = Path(__file__).resolve().parent
ESC = "\x1b"
OK = f"{ESC}[1;32mOK{ESC}[0m"
FAIL = f"{ESC}[1;31mFAIL{ESC}[0m"

FFN = ("routed_gate_type=q2_K,routed_up_type=q2_K,routed_down_type={down},shexp_gate_type=q4_K,"
       "shexp_up_type=q4_K,shexp_down_type=q4_K,n_expert=256,n_expert_used=8,n_tokens=1,"
       "n_embd=6144,n_ff=2048,fused_glu=1,weighted_down={wd},merged_shexp_gate_up={mg}")
MMID = "type_a={t},type_b=f32,n_mats=256,n_used=8,b=0,m={m},n=1,k={k}"
Q3_DOWN = MMID.format(t="q3_K", m=6144, k=2048)


def ffn(down: str = "q3_K", wd: int = 0, mg: int = 0) -> str:
    return FFN.format(down=down, wd=wd, mg=mg)


def text(name: str) -> str:
    return (SAMPLES / name).read_text(encoding="utf-8")


def prefix(name: str, params: str) -> str:
    """`  NAME(params): ` as test-backend-ops flushes it (before the numbers)."""
    return f"  {name}({params}): "


def numbers_gb(runs: int, us: float, kb: int, gbs: float) -> str:
    return (f"    {runs:8d} runs - {us:8.2f} us/run - {kb:8d} kB/run - "
            f"{ESC}[1;34m{gbs:7.2f} GB/s{ESC}[0m")


def numbers_flops(runs: int, us: float, mflop: float, gflops: float, unit: str = "G") -> str:
    return (f"    {runs:8d} runs - {us:8.2f} us/run - {mflop:6.2f} MFLOP/run - "
            f"{ESC}[1;34m{gflops:6.2f} {unit}FLOPS{ESC}[0m")


def row(name: str, params: str, numbers: str) -> str:
    """A whole perf row, padded to the next multiple of 8 as test-backend-ops does."""
    head = prefix(name, params)
    last = (len(head) + 7) // 8 * 8
    if last - len(head) < 5:
        last += 8
    return head + " " * (last - len(head)) + numbers


def perf_log(rows: list[str], backend: str = "Metal", device: str = "Apple M3 Max",
             chatter: str = "ggml_metal_device_init: GPU name:   Apple M3 Max") -> str:
    """A perf-mode log around the given row lines."""
    lines = [chatter, "Testing 3 devices", "", f"Backend 1/3: {backend}",
             f"  Device description: {device}", "", *rows, f"  Backend {backend}: {OK}", "",
             "Backend 2/3: BLAS", "  Skipping", "", "Backend 3/3: CPU",
             "  Skipping CPU backend", "3/3 backends passed", OK]
    return "\n".join(lines) + "\n"
