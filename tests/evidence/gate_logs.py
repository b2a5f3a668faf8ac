"""Realistic test-backend-ops text for the gate / decision tests (rows named by their rule label).

Texts go through the real ingestion (`evidence.ingest_texts`), so the tests exercise the
parsers, the tidy table and the rules together.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from meshcert.evidence import ingest_texts
from meshcert.evidence.rules import RULES, format_params
from meshcert.evidence.settings import EvidenceSettings, load_settings
from meshcert.evidence.table import COLUMNS, table_from_columns

# Every required Phase E row, with values that pass every gate (estimate = 399.30 us).
PASSING_US: dict[str, float] = {
    "route": 3.26, "weighted_sum_1tok": 6.69, "routed_gate_up_q2_K": 110.0,
    "routed_down_q3_K": 164.0, "routed_down_q2_K": 120.0, "routed_swiglu_fused": 5.35,
    "small_graph_fused": 50.0, "shexp_q4_K": 405.32, "shexp_q3_K": 380.0, "shexp_q2_K": 350.0,
    "ffn_q3_down": 1147.21, "ffn_q2_down": 817.38, "ffn_q2_down_weighted": 815.0,
    "ffn_q3_down_merged_shexp": 1140.0, "shexp_component_5": 4.09,
}
ESTIMATE_US = 3.26 + 2 * 110.0 + 5.35 + 164.0 + 6.69

SWEEP_US: dict[str, float] = {
    "sweep_mul_mm_id": 860.96, "sweep_nsg_1": 170.0, "sweep_nsg_2": 164.46, "sweep_nsg_4": 165.1,
    "sweep_nr0_1": 195.0, "sweep_nr0_2": 196.0, "sweep_nr0_4": 163.98, "sweep_nr0_8": 166.2,
    "sweep_glm_down_nsg_2": 164.04, "sweep_glm_down_nsg_4": 162.67,
}
GLM_DOWN_KERNEL = "kernel_mul_mv_id_q3_K_f32_glm_down"
PLAIN_KERNEL = "kernel_mul_mv_id_q3_K_f32"


def row_name(label: str) -> str:
    spec = RULES.row(label)
    return f"{spec.op}({format_params(spec.params)})"


def perf_console(us: Mapping[str, float], backend: str = "Metal", env: str = "") -> str:
    """A perf-mode log: one row per label (CPU section skipped, as test-backend-ops does);
    `env` is echoed in a log line (runs of a sweep differ by their environment)."""
    lines = ["ggml_metal_device_init: GPU name:   Apple M3 Max",
             f"ggml_metal_device_init: env {env}", "Testing 2 devices", "",
             f"Backend 1/2: {backend}", "  Device description: Apple M3 Max", ""]
    for label, value in us.items():
        name = f"  {row_name(label)}:"
        lines.append(f"{name:<70} 2048 runs - {value:8.2f} us/run - 100.66 MFLOP/run - "
                     "\x1b[1;34m612.08 GFLOPS\x1b[0m")
    lines += [f"  Backend {backend}: OK", "", "Backend 2/2: CPU", "  Skipping CPU backend", "",
              "2/2 backends passed", "OK"]
    return "\n".join(lines) + "\n"


def parity_console(cases: Mapping[str, bool], backend: str = "Metal") -> str:
    """A test-mode (correctness) log: OK, or an NMSE failure, per label."""
    lines = ["Testing 2 devices", "", f"Backend 1/2: {backend}",
             "  Device description: Apple M3 Max", ""]
    for label, ok in cases.items():
        op = RULES.row(label).op
        result = "OK" if ok else f"[{op}] NMSE = 0.001234000 > 0.000500000 FAIL"
        lines.append(f"  {row_name(label)}: {result}")
    passed = sum(cases.values())
    status = "OK" if passed == len(cases) else "FAIL"
    lines += [f"  {passed}/{len(cases)} tests passed", f"  Backend {backend}: {status}", "",
              "Backend 2/2: CPU", "  Skipping CPU backend", "",
              f"{1 + (status == 'OK')}/2 backends passed", status]
    return "\n".join(lines) + "\n"


def dispatch_console(kernel: str, tests: tuple[int, int] = (1, 1),
                     backends: tuple[int, int] = (3, 3), env: str = "") -> str:
    """A fixed-block dispatch check run (test mode, with the fork's perf_metadata line)."""
    name = row_name("routed_down_q3_K")
    params = format_params(RULES.row("routed_down_q3_K").params)
    ok = tests[0] == tests[1]
    lines = [f"ggml_metal_device_init: dispatch env {env}", "Testing 3 devices", "",
             "Backend 1/3: Metal", "  Device description: Apple M3 Max", "",
             f"  {name}: ggml_metal_op_mul_mat_id: dispatch {kernel} nsg=2 nr0=4",
             f"ggml_test: perf_metadata op=MUL_MAT_ID params={params} kernel={kernel}",
             "OK" if ok else "[MUL_MAT_ID] NMSE = 0.1 > 0.0005 FAIL",
             f"  {tests[0]}/{tests[1]} tests passed", f"  Backend Metal: {'OK' if ok else 'FAIL'}",
             "", "Backend 2/3: BLAS", "  Device description: Accelerate", "",
             f"  {name}: not supported [BLAS] ", "  0/0 tests passed", "  Backend BLAS: OK", "",
             "Backend 3/3: CPU", "  Skipping CPU backend", "",
             f"{backends[0]}/{backends[1]} backends passed",
             "OK" if backends[0] == backends[1] else "FAIL"]
    return "\n".join(lines) + "\n"


def repeated(us: Mapping[str, float], runs: int, *, spread: float = 0.005, seed: int = 0,
             prefix: str = "run", backend: str = "Metal") -> dict[str, str]:
    """`runs` perf logs of the same rows with deterministic noise (each run's bytes differ)."""
    rng = np.random.default_rng(seed)
    out: dict[str, str] = {}
    for i in range(runs):
        noisy = {k: v * (1 + spread * rng.standard_normal()) for k, v in us.items()}
        out[f"{prefix}-{i + 1}.console.log"] = perf_console(noisy, backend, f"{prefix} {i + 1}")
    return out


def sweep_logs(us: Mapping[str, float] | None = None) -> dict[str, str]:
    """kernel-sweep/<variant>.console.log per sweep row (the variant is the file name)."""
    out = {}
    for label, value in (us or SWEEP_US).items():
        spec = RULES.row(label)
        text = perf_console({"routed_down_q3_K": value}, env=spec.variant)
        out[f"kernel-sweep/{spec.variant}.console.log"] = text
    return out


def dispatch_logs(default_kernel: str = GLM_DOWN_KERNEL, disabled_kernel: str = PLAIN_KERNEL,
                  **kwargs: Any) -> dict[str, str]:
    return {"fixed-block-dispatch/glm-down-default.console.log":
            dispatch_console(default_kernel, env="default", **kwargs),
            "fixed-block-dispatch/glm-down-disabled.console.log":
            dispatch_console(disabled_kernel, env="GGML_METAL_GLM_DOWN=0")}


def table(*texts: Mapping[str, str], label: str | None = None) -> pd.DataFrame:
    merged: dict[str, str] = {}
    for t in texts:
        merged.update(t)
    result = ingest_texts(merged, label=label)
    assert not result.problems, result.problems
    return result.table


def settings(**env: Any) -> EvidenceSettings:
    """Settings from an explicit environment (never the test process's own)."""
    return load_settings({k: str(v) for k, v in env.items()})


def frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A table built directly (for the statistics tests): unspecified columns are None."""
    defaults: dict[str, Any] = {"source_file": "direct.log", "source_line": 1, "format": "test",
                                "kind": "perf", "variant": "default", "run_id": "run-1",
                                "params": "", "param_dict": {}, "extra": {}, "op": "OP"}
    columns: dict[str, list[Any]] = {c: [] for c in COLUMNS}
    for i, row in enumerate(rows):
        full = {**defaults, "source_line": i + 1, **row}
        for c in COLUMNS:
            columns[c].append(full.get(c))
    return table_from_columns(columns)
