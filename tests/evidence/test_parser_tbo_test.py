"""test-backend-ops correctness (test) mode: parity rows and backend / overall summaries."""

from __future__ import annotations

import math

from meshcert.evidence.parsers import tbo_console
from meshcert.evidence.parsers.base import INCOMPLETE, TBO_TEST
from meshcert.evidence.table import table_from_parsed
from tests.evidence.samples import FAIL, OK, Q3_DOWN, ffn, text


def records(log: str, name: str = "parity.console.log") -> tuple[tbo_console.ParsedFile,
                                                                 list[dict]]:
    parsed = tbo_console.parse(log, name)
    return parsed, table_from_parsed([(parsed, name, "default", "r")]).to_dict("records")


def test_sample_parity_log() -> None:
    parsed, rows = records(text("phase-e-parity.console.log"))
    assert parsed.problems == []
    assert parsed.format == TBO_TEST
    parity = [r for r in rows if r["kind"] == "parity"]
    assert [(r["source_line"], r["backend"], r["passed"]) for r in parity] == [
        (9, "Metal", True), (10, "Metal", True), (11, "Metal", True), (12, "Metal", False),
        (14, "Metal", True), (17, "Metal", False), (20, "Metal", False), (27, "BLAS", True)]
    assert {r["format"] for r in rows} == {TBO_TEST}
    assert parsed.notes["test_not_supported"] == 2     # skipped, not parity evidence


def test_nmse_failure_fields() -> None:
    _, rows = records(text("phase-e-parity.console.log"))
    nmse = next(r for r in rows if r["source_line"] == 12)
    assert nmse["param_dict"]["routed_down_type"] == "q2_K"
    assert nmse["nmse"] == 0.001234
    assert nmse["extra"]["threshold"] == 0.0005 and nmse["extra"]["error_metric"] == "NMSE"
    assert nmse["error"] == "[GLM_FFN_CONSUMER] NMSE = 0.001234000 > 0.000500000"
    err = next(r for r in rows if r["source_line"] == 20)
    assert err["nmse"] == 0.000012 and err["extra"]["threshold"] == 1e-7
    assert err["extra"]["maa"] == 0.02 and err["extra"]["maa_threshold"] == 0.0001


def test_split_test_rows_pass_and_fail_later_lines() -> None:
    _, rows = records(text("phase-e-parity.console.log"))
    ok = next(r for r in rows if r["source_line"] == 14)
    assert ok["passed"] is True and ok["extra"]["result_line"] == 16
    assert ok["extra"]["kernels"] == ["kernel_mul_mv_id_q2_K_f32",
                                      "kernel_mul_mv_id_q2_K_f32_weighted"]
    nan = next(r for r in rows if r["source_line"] == 17)
    assert nan["passed"] is False and math.isnan(nan["nmse"])
    assert nan["error"].startswith("[TOPK_MOE_GLM_CONSUMER] NaN at index 3")


def test_backend_and_overall_summaries() -> None:
    _, rows = records(text("phase-e-parity.console.log"))
    backends = [r for r in rows if r["kind"] == "parity_backend"]
    assert [(r["backend"], r["passed"], r["extra"]) for r in backends] == [
        ("Metal", False, {"tests_passed": 4, "tests_total": 7}),
        ("BLAS", True, {"tests_passed": 1, "tests_total": 1})]
    total = next(r for r in rows if r["kind"] == "parity_total")
    assert total["passed"] is False and total["op"] == "" and total["backend"] is None
    assert total["extra"] == {"backends_passed": 2, "backends_total": 3, "status_line": 36}


def test_fixed_block_dispatch_runs() -> None:
    for variant, kernel in (("default", "kernel_mul_mv_id_q3_K_f32_glm_down"),
                            ("disabled", "kernel_mul_mv_id_q3_K_f32")):
        parsed, rows = records(text(f"fixed-block-dispatch/glm-down-{variant}.console.log"))
        assert parsed.problems == []
        meta = next(r for r in rows if r["kind"] == "perf_metadata")
        assert meta["extra"] == {"kernel": kernel} and meta["params"] == Q3_DOWN
        case = next(r for r in rows if r["kind"] == "parity")
        assert case["passed"] is True and case["extra"]["kernels"] == [kernel]
        metal = next(r for r in rows if r["kind"] == "parity_backend")
        assert metal["extra"] == {"tests_passed": 1, "tests_total": 1}
        total = next(r for r in rows if r["kind"] == "parity_total")
        assert total["passed"] and total["extra"]["backends_passed"] == 3


def test_missing_status_lines_fall_back_to_the_counts() -> None:
    log = "\n".join([
        "Backend 1/2: Metal", f"  MUL_MAT_ID({Q3_DOWN}): {OK}", "  1/1 tests passed",
        "Backend 2/2: BLAS", f"  GLM_FFN_CONSUMER({ffn()}): [GLM_FFN_CONSUMER] NMSE = "
        f"0.5 > 0.0005 {FAIL}", "  0/1 tests passed", "1/2 backends passed"]) + "\n"
    parsed, rows = records(log)
    assert parsed.problems == []
    backends = [(r["backend"], r["passed"], r["extra"]["status_line"])
                for r in rows if r["kind"] == "parity_backend"]
    assert backends == [("Metal", True, False), ("BLAS", False, False)]
    total = next(r for r in rows if r["kind"] == "parity_total")
    assert total["passed"] is False and "status_line" not in total["extra"]


def test_test_row_cut_off_by_the_summary_is_incomplete() -> None:
    log = "\n".join(["Backend 1/1: Metal", f"  MUL_MAT_ID({Q3_DOWN}): ",
                     "ggml_metal_graph_compute: command buffer 0 failed",
                     "  0/1 tests passed", f"  Backend Metal: {FAIL}"]) + "\n"
    parsed, rows = records(log)
    assert [(p.line, p.kind) for p in parsed.problems] == [(2, INCOMPLETE)]
    assert not [r for r in rows if r["kind"] == "parity"]


def test_other_failure_texts_ending_in_fail() -> None:
    log = "\n".join([
        "Backend 1/1: Metal",
        f"  ADD(type=f32,ne=[10,5,4,3]): sentinel mismatch: sent_3 {FAIL}",
        f"  MUL(type=f32,ne=[10,5,4,3]): compare failed {FAIL}",
        f"  GELU(type=f32): [GELU] inf mismatch: Metal=inf CPU=1.000000 {FAIL}",
        "  0/3 tests passed", f"  Backend Metal: {FAIL}", "0/1 backends passed", FAIL]) + "\n"
    parsed, rows = records(log)
    assert parsed.problems == []
    fails = [r for r in rows if r["kind"] == "parity"]
    assert [r["error"] for r in fails] == ["sentinel mismatch: sent_3", "compare failed",
                                           "[GELU] inf mismatch: Metal=inf CPU=1.000000"]
    assert all(r["passed"] is False and math.isnan(r["nmse"]) for r in fails)
