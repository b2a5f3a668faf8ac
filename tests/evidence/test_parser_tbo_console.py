"""test-backend-ops perf console logs: rows, split rows, ANSI, sections, problems."""

from __future__ import annotations

import math

import pytest

from meshcert.evidence.parsers import tbo_console
from meshcert.evidence.parsers.base import GGML_TEST, INCOMPLETE, MALFORMED, TBO_CONSOLE, ParsedFile
from meshcert.evidence.table import table_from_parsed
from tests.evidence.samples import (
    MMID,
    Q3_DOWN,
    ffn,
    numbers_flops,
    numbers_gb,
    perf_log,
    prefix,
    row,
    text,
)


def parse(log: str, name: str = "run-1.console.log") -> tuple[ParsedFile, list[dict]]:
    parsed = tbo_console.parse(log, name)
    records = table_from_parsed([(parsed, name, "default", "r1")]).to_dict("records")
    return parsed, records


def by_line(records: list[dict], line: int, kind: str = "perf") -> dict:
    found = [r for r in records if r["source_line"] == line and r["kind"] == kind]
    assert len(found) == 1, found
    return found[0]


def test_sample_perf_log_rows_sections_and_throughput() -> None:
    parsed, records = parse(text("phase-e-perf.console.log"))
    assert parsed.problems == []
    assert parsed.format == TBO_CONSOLE
    perf = [r for r in records if r["kind"] == "perf"]
    assert len(perf) == 17
    assert {r["backend"] for r in records} == {"Metal"}
    assert {r["device"] for r in records} == {"Apple M3 Max"}
    add = by_line(records, 10)
    assert (add["op"], add["params"]) == ("ADD", "type=f32,ne=[4096,1,1,1],nr=[1,1,1,1]")
    assert add["param_dict"]["ne"] == (4096, 1, 1, 1)
    assert add["us_per_run"] == 5.83 and add["runs"] == 171990 and add["supported"]
    assert add["extra"] == {"memory_kb": 48.0, "bandwidth_gb_s": 0.37}      # ANSI stripped
    assert add["metric"] == "us_per_run" and add["value"] == 5.83
    tflops = by_line(records, 14)
    assert tflops["extra"]["flops"] == pytest.approx(1.98e12)
    assert tflops["extra"]["flop_per_run"] == pytest.approx(201.33e6)
    gflops = by_line(records, 15)
    assert gflops["extra"]["flops"] == pytest.approx(101.39e9)
    assert parsed.notes["perf_mode_status_lines"] == 2      # `Backend Metal: OK` is no parity


def test_not_supported_row_is_kept_without_timing() -> None:
    _, records = parse(text("phase-e-perf.console.log"))
    row_ = by_line(records, 29)
    assert row_["op"] == "GLM_SHEXP_CONSUMER" and row_["param_dict"]["gate_type"] == "q2_K"
    assert row_["supported"] is False and math.isnan(row_["us_per_run"])


def test_split_rows_with_stderr_and_ggml_lines_between_name_and_numbers() -> None:
    parsed, records = parse(text("phase-e-perf.console.log"))
    split = by_line(records, 16)                 # name on 16, numbers on 24
    assert (split["op"], split["params"]) == ("MUL_MAT_ID", Q3_DOWN)
    assert split["us_per_run"] == 164.46 and split["runs"] == 1536
    assert split["extra"]["result_line"] == 24
    assert split["extra"]["kernels"] == ["kernel_mul_mv_id_q3_K_f32"]
    samples = [r for r in records if r["kind"] == "perf_sample"]
    assert [r["us_per_run"] for r in samples] == [164.90, 164.46, 163.98]
    assert {r["format"] for r in samples} == {GGML_TEST}
    assert {r["backend"] for r in samples} == {"Metal"}     # the section they appeared in
    ffn_row = by_line(records, 30)               # name alone on 30, 3 dispatch lines, numbers
    assert ffn_row["param_dict"]["routed_down_type"] == "q3_K"
    assert ffn_row["us_per_run"] == 1147.21 and ffn_row["extra"]["result_line"] == 34
    assert len(ffn_row["extra"]["kernels"]) == 3
    assert [r["source_line"] for r in records] == sorted(r["source_line"] for r in records)


def test_rows_split_by_many_lines_and_ansi_everywhere() -> None:
    log = perf_log([
        prefix("GLM_FFN_CONSUMER", ffn("q2_K", 1)) + "ggml_metal_encode_node: dispatch "
        "kernel_mul_mv_id_q2_K_f32 nsg=2",
        "ggml_metal_graph_compute: command buffer 0 committed",
        f"ggml_test: perf_sample op=GLM_FFN_CONSUMER params={ffn('q2_K', 1)} sample=1/2 "
        "runs=64 avg_us=815.5",
        f"ggml_test: perf_sample op=GLM_FFN_CONSUMER params={ffn('q2_K', 1)} sample=2/2 "
        "runs=64 avg_us=814.5",
        "                    " + numbers_flops(1224, 815.02, 226.49, 277.90).lstrip(),
        row("GLM_FFN_CONSUMER", ffn("q2_K", 0), numbers_flops(1224, 817.38, 226.49, 277.10)),
    ])
    parsed, records = parse(log)
    assert parsed.problems == []
    split = by_line(records, 7)
    assert split["param_dict"]["weighted_down"] == 1 and split["us_per_run"] == 815.02
    assert [r["sample"] for r in records if r["kind"] == "perf_sample"] == [1, 2]
    assert by_line(records, 12)["us_per_run"] == 817.38


def test_chatter_is_counted_not_reported() -> None:
    log = perf_log([row("ADD", "type=f32,ne=[4096,1,1,1],nr=[1,1,1,1]",
                        numbers_gb(171990, 5.83, 48, 0.37))],
                   chatter="llama_model_loader: - kv   0: general.architecture str = glm")
    parsed, _ = parse(log)
    assert parsed.problems == []
    assert parsed.ignored >= 3              # chatter, Skipping, Skipping CPU backend


def test_malformed_rows_are_problems_with_line_numbers() -> None:
    good = row("MUL_MAT_ID", MMID.format(t="q2_K", m=6144, k=2048),
               numbers_flops(2048, 129.40, 100.66, 777.92))
    log = perf_log([
        good,
        "  MUL_MAT_ID(type_a=q3_K):        2048 runs - fast us/run - 100.66 MFLOP/run",
        "             1536 runs -   164.46 us/run - 100.66 MFLOP/run - 612.08 GFLOPS",
        prefix("GLM_FFN_CONSUMER", ffn()),
        good,
    ])
    parsed, records = parse(log)
    problems = {(p.line, p.kind) for p in parsed.problems}
    assert (8, MALFORMED) in problems            # unparsable numbers
    assert (9, MALFORMED) in problems            # numbers without a row name
    assert (10, INCOMPLETE) in problems          # a name whose numbers never came
    assert [r["source_line"] for r in records if r["kind"] == "perf"] == [7, 11]


def test_odd_throughput_keeps_timing_and_reports() -> None:
    log = perf_log([row("ADD", "type=f32", "      10 runs -     5.00 us/run - 3 widgets")])
    parsed, records = parse(log)
    assert by_line(records, 7)["us_per_run"] == 5.0
    assert [p.line for p in parsed.problems] == [7]
    assert "throughput" in parsed.problems[0].reason


def test_truncated_log_reports_the_pending_row() -> None:
    log = perf_log([]).split("  Backend Metal")[0] + prefix("MUL_MAT_ID", Q3_DOWN) + "\n"
    parsed, _ = parse(log)
    assert [(p.line, p.kind) for p in parsed.problems] == [(7, INCOMPLETE)]
    assert "MUL_MAT_ID" in parsed.problems[0].excerpt


def test_backend_sections_switch_backend_and_device() -> None:
    rows = [row("ADD", "type=f32", numbers_gb(10, 1.0, 1, 1.0))]
    log = perf_log(rows, backend="Metal") + perf_log(rows, backend="CUDA0",
                                                     device="NVIDIA RTX 4090")
    _, records = parse(log)
    assert [(r["backend"], r["device"]) for r in records] == [
        ("Metal", "Apple M3 Max"), ("CUDA0", "NVIDIA RTX 4090")]


def test_many_rows_take_the_backend_of_their_section() -> None:
    """Enough rows for the bulk pass to look sections up in runs (a section without rows in
    between, a section change right before a row)."""
    rows = [row("ADD", f"type=f32,n={i}", numbers_gb(10, 1.0 + i, 1, 1.0)) for i in range(70)]
    log = perf_log(rows, backend="Metal") + perf_log(rows, backend="CUDA0",
                                                     device="NVIDIA RTX 4090")
    _, records = parse(log)
    assert [(r["backend"], r["device"]) for r in records] == \
        [("Metal", "Apple M3 Max")] * 70 + [("CUDA0", "NVIDIA RTX 4090")] * 70


def test_bulk_path_and_line_by_line_fallback_agree() -> None:
    rows = [row("MUL_MAT_ID", MMID.format(t=t, m=m, k=k), numbers_flops(1000 + i, 100.0 + i,
                                                                        100.66, 600.0 + i))
            for i, (t, m, k) in enumerate([("q2_K", 2048, 6144), ("q3_K", 6144, 2048)] * 50)]
    clean = perf_log(rows)
    odd = perf_log([*rows, "  ODD(x=1):   5 runs -  1.00 us/run - ???"])   # forces fallback
    _, fast = parse(clean)
    parsed, slow = parse(odd)
    assert len(parsed.problems) == 1
    keep = ("source_line", "op", "params", "us_per_run", "runs", "extra", "backend")
    assert [{k: r[k] for k in keep} for r in fast] == \
        [{k: r[k] for k in keep} for r in slow if r["op"] != "ODD"]


def test_crlf_and_params_with_spaces() -> None:
    log = perf_log([
        "  SOFT_MAX(type=f32, ne=[16,16,1,1], scale=1.000000):      512 runs -    "
        "3.10 us/run -        2 kB/run -    0.66 GB/s"]).replace("\n", "\r\n")
    parsed, records = parse(log)
    assert parsed.problems == []
    r = by_line(records, 7)
    assert r["params"] == "type=f32,ne=[16,16,1,1],scale=1.000000"
    assert r["param_dict"]["scale"] == 1.0
