"""llama-bench -o json | jsonl | csv | sql."""

from __future__ import annotations

import json

import pytest

from meshcert.evidence.parsers import detect, llama_bench
from meshcert.evidence.parsers.base import LLAMA_BENCH, MALFORMED
from meshcert.evidence.table import table_from_parsed
from tests.evidence.samples import text


def records(body: str, name: str = "bench.out") -> tuple[llama_bench.ParsedFile, list[dict]]:
    parsed = llama_bench.parse(body, name)
    return parsed, table_from_parsed([(parsed, name, "default", "r")]).to_dict("records")


def averages(rows: list[dict]) -> list[tuple]:
    return [(r["source_line"] > 0, r["op"], r["metric"], round(r["value"], 3),
             round(r["value_err"], 3), r["params"], r["backend"], r["device"],
             r["build_commit"]) for r in rows if r["metric"] in ("avg_ts", "avg_ns")]


@pytest.mark.parametrize("name", ["llama-bench.json", "llama-bench.jsonl", "llama-bench.csv",
                                  "llama-bench.sql"])
def test_every_output_format_gives_the_same_averages(name: str) -> None:
    parsed, rows = records(text(name), name)
    assert parsed.problems == [] and parsed.format == LLAMA_BENCH
    _, reference = records(text("llama-bench.json"))
    assert averages(rows) == averages(reference)
    pp = next(r for r in rows if r["op"] == "pp512" and r["metric"] == "avg_ts")
    assert pp["value"] == pytest.approx(157.4409, abs=1e-3)
    assert pp["param_dict"]["model"] == "GLM-5.2-Q2_K-00001-of-00004.gguf"
    assert pp["param_dict"]["n_prompt"] == 512 and pp["param_dict"]["flash_attn"] == 1
    assert pp["param_dict"]["model_type"] == "glm-dsa 744B.A40B Q2_K - Medium"
    assert pp["extra"]["cpu_info"] == "Apple M3 Max" and pp["extra"]["output"] in name
    assert pp["extra"]["build_number"] == 5163
    ns = next(r for r in rows if r["op"] == "tg128" and r["metric"] == "avg_ns")
    assert ns["us_per_run"] == pytest.approx(ns["value"] / 1000)


def test_json_samples_become_rows() -> None:
    _, rows = records(text("llama-bench.json"))
    samples = [r for r in rows if r["op"] == "tg128" and r["metric"] == "sample_ts"]
    assert [r["sample"] for r in samples] == [1, 2, 3, 4, 5]
    assert samples[0]["value"] == pytest.approx(13.614)
    ns = [r for r in rows if r["op"] == "tg128" and r["metric"] == "sample_ns"]
    assert ns[0]["us_per_run"] == 9402100.0
    avg = next(r for r in rows if r["op"] == "tg128" and r["metric"] == "avg_ts")
    assert avg["runs"] == 5
    assert [r["source_line"] for r in rows if r["op"] == "pp512"][0] == 2   # the `{` line


def test_test_names() -> None:
    assert llama_bench.test_name(512, 0, 0) == "pp512"
    assert llama_bench.test_name(0, 128, 0) == "tg128"
    assert llama_bench.test_name(512, 128, 0) == "pp512+tg128"
    assert llama_bench.test_name(0, 128, 4096) == "tg128@d4096"


def test_bad_records_are_problems_with_line_numbers() -> None:
    good = json.loads(text("llama-bench.jsonl").splitlines()[0])
    body = "\n".join([json.dumps(good), "{not json", json.dumps({"build_commit": "x"}),
                      json.dumps(dict(good, samples_ns=["a"]))]) + "\n"
    parsed, rows = records(body)
    assert [(p.line, p.kind) for p in parsed.problems] == [(2, MALFORMED), (3, MALFORMED),
                                                           (4, MALFORMED)]
    assert {r["source_line"] for r in rows} == {1, 4}


def test_truncated_json_array_keeps_what_came_before() -> None:
    body = text("llama-bench.json")
    cut = body[: body.index("}", body.index('"samples_ts"')) + 1] + ",\n  {\n    \"avg_ns\": "
    parsed, rows = records(cut)
    assert {r["op"] for r in rows} == {"pp512"}
    assert len(parsed.problems) == 1 and parsed.problems[0].line is not None


def test_csv_column_mismatch_and_markdown() -> None:
    lines = text("llama-bench.csv").splitlines()
    parsed, rows = records("\n".join([lines[0], lines[1], '"only","three","fields"']) + "\n")
    assert [(p.line, p.kind) for p in parsed.problems] == [(3, MALFORMED)]
    assert {r["op"] for r in rows} == {"pp512"}
    md = ("| model | size | params | backend | ngl | test | t/s |\n"
          "| --- | ---: | ---: | --- | --: | --- | ---: |\n")
    parsed, rows = records(md)          # a header without rows: a problem, no values
    assert rows == [] and parsed.problems[0].reason == "llama-bench table without result rows"


MD_TABLE = text("llama-bench-md-pasted.txt")  # among stderr lines and code fences
ROUNDED_ROW = "| llama 7B Q4_0 | 3.56 GiB | 6.74 B | CUDA | 99 | tg128 | 137.0 |"
CUT_ROW = "| llama 7B Q4_0                  |   3.56 GiB |     6.74 B | CUDA"


def test_default_markdown_table_among_stderr_and_fences() -> None:
    bad_rows = f"{ROUNDED_ROW}\n{CUT_ROW}\n```\n\nbuild"
    parsed, rows = records(MD_TABLE.replace("```\n\nbuild", bad_rows))
    assert [(r["op"], r["value"], r["value_err"], r["backend"], r["source_line"])
            for r in rows] == [("pp512", 4125.44, 21.07, "CUDA", 6),
                               ("tg128", 137.09, 0.25, "CUDA", 8),
                               ("pp512@d4096", 3001.1, 4.0, "CUDA", 9)]
    assert rows[0]["param_dict"] == {"model_type": "llama 7B Q4_0", "n_gpu_layers": 99}
    assert rows[0]["build_commit"] == "8e672efe"
    assert [(p.line, p.kind) for p in parsed.problems] == [(10, MALFORMED), (11, MALFORMED)]


def test_old_sql_table_named_test_is_llama_bench() -> None:
    sql = ("CREATE TABLE IF NOT EXISTS test (\n  build_commit TEXT,\n  avg_ns INTEGER,\n"
           "  avg_ts REAL\n);\n"
           "INSERT INTO test (build_commit, n_prompt, n_gen, avg_ns, stddev_ns, avg_ts, "
           "stddev_ts) VALUES ('8e672efe', '512', '0', '124108000', '100000', '4125.44', "
           "'21.07');\n")
    assert detect(sql, "bench.sql") == LLAMA_BENCH
    parsed, rows = records(sql)
    assert parsed.problems == []
    assert {(r["op"], r["metric"], r["value"]) for r in rows} == {
        ("pp512", "avg_ts", 4125.44), ("pp512", "avg_ns", 124108000.0)}


def test_a_perplexity_result_next_to_a_table_is_a_problem_not_lost() -> None:
    parsed, rows = records(MD_TABLE + "8.15.208.717 I Final estimate: PPL = 7.8276 +/- 0.33145\n")
    assert len(rows) == 3
    assert [p.line for p in parsed.problems] == [len(MD_TABLE.split("\n"))]
