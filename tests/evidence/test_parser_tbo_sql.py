"""test-backend-ops --output sql (with / without the two trailing columns) and --output csv."""

from __future__ import annotations

import math

from meshcert.evidence.parsers import tbo_sql
from meshcert.evidence.parsers.base import MALFORMED, REJECTED, TBO_CSV, TBO_SQL
from meshcert.evidence.parsers.sql_insert import parse_values
from meshcert.evidence.table import table_from_parsed
from tests.evidence.samples import ffn, text

COLUMNS14 = ("test_time, build_commit, backend_name, op_name, op_params, test_mode, supported, "
             "passed, error_message, time_us, flops, bandwidth_gb_s, memory_kb, n_runs")


def records(sql: str, name: str = "run.sql") -> tuple[tbo_sql.ParsedFile, list[dict]]:
    parsed = tbo_sql.parse(sql, name)
    return parsed, table_from_parsed([(parsed, name, "default", "r")]).to_dict("records")


def insert(*values: str, columns: str = COLUMNS14) -> str:
    return f"INSERT INTO test_backend_ops ({columns}) VALUES ({', '.join(values)});"


def test_sixteen_columns_perf_and_test_rows() -> None:
    parsed, rows = records(text("phase-e-perf.sql"))
    assert parsed.problems == [] and parsed.format == TBO_SQL
    assert parsed.build_commit == "8cf427ff"
    perf = [r for r in rows if r["kind"] == "perf"]
    assert [(r["source_line"], r["us_per_run"], r["runs"]) for r in perf[:3]] == [
        (20, 1147.21, 872), (21, 817.38, 1224), (22, 868.59, 1152)]
    first = perf[0]
    assert first["op"] == "GLM_FFN_CONSUMER" and first["params"] == ffn("q3_K", 0, 0)
    assert (first["backend"], first["device"], first["build_commit"]) == (
        "MTL0", "Apple M3 Max", "8cf427ff")
    assert first["extra"] == {"test_time": "2025-11-20T10:01:02Z", "backend_reg_name": "Metal",
                              "flops": 201540000000.0}
    unsupported = perf[3]
    assert unsupported["supported"] is False and math.isnan(unsupported["us_per_run"])
    parity = [(r["param_dict"]["weighted_down"], r["passed"], r["error"])
              for r in rows if r["kind"] == "parity"]
    assert parity == [(0, True, None), (1, False, "NMSE above threshold")]
    assert parsed.notes == {"test_not_supported": 1}


def test_fourteen_columns_from_an_older_build() -> None:
    parsed, rows = records(text("older-build.sql"))
    assert parsed.problems == []
    assert [(r["op"], r["backend"], r["device"], r["us_per_run"]) for r in rows] == [
        ("ADD", "Metal", None, 5.83), ("MOE_WEIGHTED_SUM", "Metal", None, 6.69)]
    assert rows[0]["extra"] == {"test_time": "2025-10-01T08:00:00Z", "bandwidth_gb_s": 0.37,
                                "memory_kb": 48.0}
    assert rows[0]["param_dict"]["ne"] == (4096, 1, 1, 1)


def test_bad_inserts_are_problems_with_line_numbers() -> None:
    sql = "\n".join([
        "CREATE TABLE IF NOT EXISTS test_backend_ops (", "  test_time TEXT", ");", "",
        insert("'t'", "'c'", "'Metal'", "'ADD'", "'type=f32'", "'perf'", "'1'", "'1'", "''",
               "'5.0'", "'0'", "'1.0'", "'4'", "'10'"),
        insert("'t'", "'c'", "'Metal'", "'ADD'", "'type=f32'", "'perf'"),          # too few
        insert("'t'", "'c'", "'Metal'", "'ADD'", "'type=f32'", "'perf'", "'1'", "'1'", "''",
               "'fast'", "'0'", "'1.0'", "'4'", "'10'"),                          # no number
        "INSERT INTO test_backend_ops VALUES broken",
        "INSERT INTO llama_bench (a) VALUES ('1');",
        "ggml_metal_device_init: GPU name: Apple M3 Max",
    ]) + "\n"
    parsed, rows = records(sql)
    assert [r["source_line"] for r in rows] == [5]
    assert [(p.line, p.kind) for p in parsed.problems] == [
        (6, MALFORMED), (7, MALFORMED), (8, MALFORMED), (9, MALFORMED)]
    assert "14 columns but 6 values" in parsed.problems[0].reason
    assert parsed.ignored == 1


def test_unescaped_quote_in_an_error_message() -> None:
    values = ["'t'", "'c'", "'Metal'", "'ADD'", "'type=f32'", "'test'", "'1'", "'0'",
              "'can't compare'", "'0'", "'0'", "'0'", "'0'", "'0'"]
    parsed, rows = records(insert(*values) + "\n")
    assert parsed.problems == []
    assert rows[0]["error"] == "can't compare" and rows[0]["passed"] is False


def test_parse_values() -> None:
    assert parse_values("'a', 'b''c', 12, NULL") == ["a", "b'c", "12", None]
    assert parse_values("'a' 'b'") is None


def test_csv_output_is_rejected_with_a_clear_message() -> None:
    parsed = tbo_sql.reject_csv(text("tbo-output.csv"), "tbo-output.csv")
    assert parsed.rows == [] and parsed.format == TBO_CSV
    [problem] = parsed.problems
    assert (problem.line, problem.kind) == (1, REJECTED)
    assert "no timing column" in problem.reason and "--output sql" in problem.reason
