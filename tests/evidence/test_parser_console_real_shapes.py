"""test-backend-ops output as people really paste it: old headers, error-first failures, the
`Failing tests:` list, `ctest -V` prefixes, wrapped rows, rows run together."""

from __future__ import annotations

from typing import Any

import pytest

from meshcert.evidence import ingest_texts
from meshcert.evidence.ingest import IngestResult

MM = "MUL_MAT(type_a=f16,type_b=f32,m=4096,n=1,k=14336,bs=[1,1],nr=[1,1],per=[0,1,2,3])"
MMID = "MUL_MAT_ID(type_a=q4_0,type_b=f32,n_mats=32,n_used=4,b=0,m=4096,n=1,k=14336)"


def ingest(text: str, name: str = "run.log") -> IngestResult:
    return ingest_texts({name: text})


def rows(result: IngestResult, kind: str) -> list[dict[str, Any]]:
    t = result.table
    return list(t[t["kind"] == kind].to_dict("records"))


def test_old_backend_headers_give_every_row_its_backend() -> None:
    text = ("Testing 2 backends\n\nBackend 1/2 (CPU)\n  Skipping\n\nBackend 2/2 (CUDA0)\n"
            "  Backend name: CUDA0\n"
            f"  {MM}:                    4260 runs -   241.44 us/run - 117.44 MFLOP/run - "
            "486.42 GFLOPS\n  Backend CUDA0: OK\n\n2/2 backends passed\nOK\n")
    r = ingest(text)
    perf = rows(r, "perf")
    assert [(p["backend"], p["us_per_run"]) for p in perf] == [("CUDA0", 241.44)]
    assert not r.problems


def test_error_first_failures_are_failures_with_their_error() -> None:
    text = ("Backend 1/2: CUDA0\n  Device description: NVIDIA GeForce RTX 4090\n\n"
            f"[MUL_MAT_ID] ERR = 1.010000000 > 0.000500000   {MMID}: \x1b[1;31mFAIL\x1b[0m\n"
            f"[MUL_MAT] NMSE = 0.002100000 > 0.000500000 {MM}: FAIL\n"
            f"  {MM.replace('f16', 'f32')}: OK\n"
            "  1/3 tests passed\n  Backend CUDA0: FAIL\n")
    r = ingest(text)
    parity = rows(r, "parity")
    assert [(p["op"], p["passed"], p["backend"]) for p in parity] == [
        ("MUL_MAT_ID", False, "CUDA0"), ("MUL_MAT", False, "CUDA0"), ("MUL_MAT", True, "CUDA0")]
    assert parity[1]["nmse"] == pytest.approx(0.0021)
    assert parity[0]["nmse"] == pytest.approx(1.01)
    assert parity[0]["extra"]["threshold"] == pytest.approx(0.0005)
    assert not r.problems


def test_an_error_line_alone_attaches_to_the_failing_case_below_it() -> None:
    text = ("Backend 1/1: Vulkan0\n[MUL_MAT] NMSE = 0.002100000 > 0.000500000 \n"
            f"  {MM}: FAIL\n  0/1 tests passed\n")
    parity = rows(ingest(text), "parity")
    assert parity[0]["passed"] is False and parity[0]["nmse"] == pytest.approx(0.0021)


def test_failure_text_that_names_no_case_is_a_problem() -> None:
    r = ingest(f"Backend 1/1: Vulkan0\n  {MM}: OK\n[MUL_MAT] NMSE = 0.5 > 0.0005 \n")
    assert [(p.line, p.kind) for p in r.problems] == [(3, "malformed")]


def test_failing_tests_list_records_failures_not_seen_on_their_own_line() -> None:
    other = MM.replace("f16", "q4_0")
    text = ("Backend 1/2: Metal\n"
            f"  {MM}: [MUL_MAT] NMSE = 0.1 > 0.0005 FAIL\n"
            "  5/7 tests passed\n\nFailing tests:\n"
            f"  {MM}\n  {other}\n  Backend Metal: FAIL\n")
    r = ingest(text)
    parity = rows(r, "parity")
    assert [(p["params"].split(",")[0], p["passed"], p["source_line"]) for p in parity] == [
        ("type_a=f16", False, 2), ("type_a=q4_0", False, 7)]
    assert parity[1]["backend"] == "Metal" and parity[1]["extra"] == {"failing_list": True}
    assert r.sources[0].notes["failing_list_confirmed"] == 1


def test_ctest_prefixes_are_removed() -> None:
    lines = ["31: Test command: /build/bin/test-backend-ops", "31: Testing 2 devices", "31: ",
             "31: Backend 1/2: CPU", f"31:   {MM}: OK", "31:   1/1 tests passed",
             "31:   Backend CPU: OK", "31: 2/2 backends passed", "31: OK",
             "1/1 Test #31: test-backend-ops .................   Passed   12.00 sec"]
    r = ingest("\n".join(lines) + "\n")
    parity = rows(r, "parity")
    assert [(p["op"], p["passed"], p["backend"], p["source_line"]) for p in parity] == [
        ("MUL_MAT", True, "CPU", 5)]
    assert r.sources[0].notes["ctest_prefix_lines"] == 9
    assert not r.problems


def test_a_wrapped_row_is_joined_and_keeps_its_line_number() -> None:
    head, tail = MM[:60], MM[60:]
    text = (f"Backend 1/1: Vulkan0\n  {head}\n{tail}:      4260 runs -   241.44 us/run - "
            "117.44 MFLOP/run - 486.42 GFLOPS\n"
            f"  {MM}:      4260 runs -   240.00 us/run - 117.44 MFLOP/run - 486.42 GFLOPS\n")
    r = ingest(text)
    perf = rows(r, "perf")
    assert [(p["params"], p["us_per_run"], p["source_line"]) for p in perf] == [
        (MM[8:-1], 241.44, 2), (MM[8:-1], 240.0, 4)]
    assert r.sources[0].notes["wrapped_rows_joined"] == 1 and not r.problems


def test_a_cut_row_followed_by_a_whole_row_is_a_problem_not_a_merged_row() -> None:
    text = (f"Backend 1/1: Vulkan0\n  {MM[:40]}\n"
            f"  {MM}:      4260 runs -   240.00 us/run - 117.44 MFLOP/run - 486.42 GFLOPS\n")
    r = ingest(text)
    assert [p["us_per_run"] for p in rows(r, "perf")] == [240.0]
    assert [(p.line, p.kind) for p in r.problems] == [(2, "incomplete")]


def test_a_case_name_repeated_in_its_params_is_flagged_not_kept() -> None:
    text = (f"Backend 1/1: CUDA0\n  MUL_MAT(type_a=f16,{MM}:      4260 runs -   241.44 us/run - "
            "117.44 MFLOP/run - 486.42 GFLOPS\n"
            f"  {MM}:      4260 runs -   240.00 us/run - 117.44 MFLOP/run - 486.42 GFLOPS\n")
    r = ingest(text)
    assert [p["us_per_run"] for p in rows(r, "perf")] == [240.0]
    assert [(p.line, p.kind) for p in r.problems] == [(2, "malformed")]
    assert "repeated inside its params" in r.problems[0].reason


def test_a_few_numbered_lines_are_not_taken_for_ctest_prefixes() -> None:
    from meshcert.evidence.parsers.paste import strip_ctest

    text = (f"Backend 1/1: CPU\n  {MM}: OK\n1: a numbered note\n  {MM.replace('f16', 'f32')}: OK\n"
            "  2/2 tests passed\n")
    assert strip_ctest(text) == (text, 0)


def test_bracketed_chatter_is_not_a_failure() -> None:
    r = ingest(f"Backend 1/1: CPU\n[INFO] loaded Foo(bar): ok\n  {MM}: OK\n  1/1 tests passed\n")
    assert [(p["op"], p["passed"]) for p in rows(r, "parity")] == [("MUL_MAT", True)]
    assert not r.problems
